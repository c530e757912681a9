//! The worker service (see `platform::service`).

fn main() {
    prover_services::main_for(platform::service::Role::Worker);
}
