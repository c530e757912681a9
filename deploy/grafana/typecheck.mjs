// Type-checks the Grafana dashboards of this folder against @grafana/schema with the
// TypeScript compiler: the dashboard as a whole (Dashboard), and the options and custom field
// config of each panel against its panel plugin's types (timeseries, stat). Misspelt keys,
// missing required fields and wrong value types are errors.
//
// Usage: node deploy/grafana/typecheck.mjs NODE_MODULES_DIR DASHBOARD.json...
// NODE_MODULES_DIR holds typescript and @grafana/schema (scripts/test.d/30-k8s.sh installs them).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error('usage: node typecheck.mjs NODE_MODULES_DIR DASHBOARD.json...');
  process.exit(2);
}

// JSON carries enum values as strings; @grafana/schema declares some as TypeScript string
// enums (ThresholdsMode, FieldColorModeId, ...), to which no string literal is assignable.
// Loosen<T> turns every string enum into the union of its values and keeps everything else,
// so the check stays exact about keys and value types.
const prelude = `
import type { Dashboard } from '@grafana/schema';
import type { Options as TimeSeriesOptions, FieldConfig as TimeSeriesFieldConfig } from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';
import type { Options as StatOptions } from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
type Loosen<T> = T extends string ? \`\${T}\`
  : T extends ReadonlyArray<infer U> ? Array<Loosen<U>>
  : T extends object ? { [K in keyof T]: Loosen<T[K]> }
  : T;
`;

const dir = mkdtempSync(join(tmpdir(), 'dashboard-check-'));
try {
  symlinkSync(resolve(modules), join(dir, 'node_modules'), 'dir');
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const dash = JSON.parse(text);
    let ts = prelude + `export const dashboard = ${JSON.stringify(dash, null, 2)} satisfies Loosen<Dashboard>;\n`;
    const panels = (dash.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
    let checked = 0;
    for (const p of panels) {
      const types = { timeseries: ['TimeSeriesOptions', 'TimeSeriesFieldConfig'], stat: ['StatOptions', null] }[p.type];
      if (p.type === 'row') continue;
      if (!types) throw new Error(`${file}: panel ${p.id} has type ${p.type}, which this check does not know`);
      ts += `export const panel${p.id}Options = ${JSON.stringify(p.options ?? {})} satisfies Loosen<${types[0]}>;\n`;
      if (types[1]) {
        ts += `export const panel${p.id}Custom = ${JSON.stringify(p.fieldConfig?.defaults?.custom ?? {})} satisfies Loosen<${types[1]}>;\n`;
      }
      checked++;
    }
    writeFileSync(join(dir, basename(file, '.json').replace(/[^A-Za-z0-9_]/g, '_') + '.ts'), ts);
    console.error(`${file}: dashboard and ${checked} panels`);
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext',
      skipLibCheck: true, types: [],
    },
    include: ['*.ts'],
  }));
  execFileSync(join(dir, 'node_modules', '.bin', 'tsc'), ['-p', join(dir, 'tsconfig.json')], { stdio: 'inherit' });
} catch (e) {
  if (e.status !== undefined) {
    console.error('dashboard type-check failed');
    process.exit(1);
  }
  throw e;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
