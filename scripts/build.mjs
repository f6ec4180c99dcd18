// Builds, with esbuild, the shipped command dist/jp.mjs from src/cli/main.ts: an ES module whose
// dynamic imports become chunks beside it (dist/*.mjs), so that each command loads only the code it
// runs (`jp conversation ls` never parses the provider SDKs or the markdown renderer).
import { build } from 'esbuild';
import { chmodSync, copyFileSync, readFileSync, rmSync } from 'node:fs';
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
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minify: true,
  keepNames: true,
  legalComments: 'none',
  define: { JP_VERSION: JSON.stringify(version) },
  plugins: [englishLocaleOnly],
  // Loaded only when a proxy is configured (src/llm/provider-fetch.ts): resolved from node_modules then.
  external: ['undici'],
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __jpCreateRequire } from 'node:module'; const require = __jpCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync(path.join(root, 'dist', 'jp.mjs'), 0o755);

// The page of `jp web` (page/): one script with marked and DOMPurify in it, its style sheet and
// document, served from dist/page/ by the installed package (no CDN, no build at install time).
await build({
  absWorkingDir: root,
  entryPoints: { app: 'page/app.ts' },
  outdir: 'dist/page',
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
for (const name of ['index.html', 'app.css', 'icon.svg'])
  copyFileSync(path.join(root, 'page', name), path.join(root, 'dist', 'page', name));
