pragma circom 2.1.0;
include "node_modules/circomlib/circuits/poseidon.circom";

// h_0 = x, h_{i+1} = Poseidon(h_i, i): a chain of N hashes; x private, the last hash public.
template Chain(N) {
    signal input x;
    signal output out;
    signal h[N + 1];
    component p[N];
    h[0] <== x;
    for (var i = 0; i < N; i++) {
        p[i] = Poseidon(2);
        p[i].inputs[0] <== h[i];
        p[i].inputs[1] <== i;
        h[i + 1] <== p[i].out;
    }
    out <== h[N];
}

component main = Chain(48);
