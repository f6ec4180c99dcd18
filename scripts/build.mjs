// Builds, with esbuild, the shipped command dist/jp.cjs (a CommonJS launcher), the program it loads,
// dist/jp.mjs (plus lazily loaded chunks), and the query server's bundle dist/server-bundle.cjs.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

// zod re-exports every one of its ~50 message locales as a namespace (`z.locales`), and the provider
// packages import zod in a way that keeps that namespace whole: 267 KB of minified code that every
// query parsed at start-up and nothing used. jp ships only the English locale, zod's default; the
// namespace still exists, with `en` alone in it.
const englishLocaleOnly = {
  name: 'zod-english-locale-only',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (arguments_) => {
      if (!/[\\/]zod[\\/]v4[\\/](core|mini|classic)$/.test(arguments_.resolveDir)) return undefined;
      return { path: path.join(arguments_.resolveDir, '..', 'locales', 'index.js'), namespace: 'zod-locales' };
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (arguments_) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(arguments_.path), 'en.js'))};`,
      loader: 'js',
      resolveDir: path.dirname(arguments_.path),
    }));
  },
};

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
  plugins: [englishLocaleOnly],
  logLevel: 'warning',
});
chmodSync(path.join(root, 'dist', 'jp.mjs'), 0o755);

// The query server: one CommonJS bundle (every dynamic import inlined, so it is a single script V8
// can cache), which `jp __serve` runs with a code cache keyed by the bundle's hash.
await build({
  absWorkingDir: root,
  entryPoints: { 'server-bundle': 'src/server/entry.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { 'dynamic-import': false },
  minify: true,
  keepNames: true,
  legalComments: 'none',
  define: { JP_VERSION: JSON.stringify(version) },
  plugins: [englishLocaleOnly],
  logLevel: 'warning',
});
const serverBundleHash = createHash('sha256').update(readFileSync(path.join(root, 'dist', 'server-bundle.cjs'))).digest('hex').slice(0, 16);

// The command: answers --version without Node's ES module loader, runs `__serve` through the code
// cache, loads dist/jp.mjs for everything else; see src/cli/launcher.ts.
await build({
  absWorkingDir: root,
  entryPoints: { jp: 'src/cli/launcher.ts' },
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minify: true,
  define: { JP_VERSION: JSON.stringify(version), JP_SERVER_BUNDLE_HASH: JSON.stringify(serverBundleHash) },
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
});
chmodSync(path.join(root, 'dist', 'jp.cjs'), 0o755);
