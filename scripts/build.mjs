// Builds the shipped entry point dist/jp.mjs (plus lazily loaded chunks) with esbuild.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

rmSync(path.join(root, 'dist'), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { jp: 'src/cli/main.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  keepNames: true,
  sourcemap: false,
  legalComments: 'none',
  define: { JP_VERSION: JSON.stringify(version) },
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __jpCreateRequire } from 'node:module'; const require = __jpCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync(path.join(root, 'dist', 'jp.mjs'), 0o755);
