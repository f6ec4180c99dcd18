// Builds, with esbuild, the shipped command dist/jp.cjs (a tiny CommonJS launcher) and the two
// bundles it runs: the program (dist/client-bundle.cjs) and the query server (dist/server-bundle.cjs).
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

// @noble/hashes (SHA-256 of workspace paths) reads globalThis.crypto, which makes Node load its
// whole crypto module; jp never needs its randomness. See src/workspace/no-web-crypto.ts.
// tinyglobby's ES module build brings fdir's, which calls createRequire(import.meta.url): undefined in
// a CommonJS bundle. Its CommonJS build requires fdir's CommonJS build, which needs neither.
const alias = { '@noble/hashes/crypto': './src/workspace/no-web-crypto.ts', tinyglobby: './node_modules/tinyglobby/dist/index.cjs' };

rmSync(path.join(root, 'dist'), { recursive: true, force: true });

/**
 * One CommonJS bundle: every dynamic import inlined (lazily evaluated, but one script), so that V8
 * can cache its compiled code as a whole (src/cli/code-cache.ts). Returns the bundle's content hash.
 */
async function bundle(name, entry) {
  await build({
    absWorkingDir: root,
    entryPoints: { [name]: entry },
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
    // Loaded only when a proxy is configured (src/llm/provider-fetch.ts): resolved from node_modules then.
    external: ['undici'],
    alias,
    logLevel: 'warning',
  });
  return createHash('sha256').update(readFileSync(path.join(root, 'dist', `${name}.cjs`))).digest('hex').slice(0, 16);
}

const clientBundleHash = await bundle('client-bundle', 'src/cli/entry.ts');
const serverBundleHash = await bundle('server-bundle', 'src/server/entry.ts');

// The command: answers --version by itself, prespawns a query's server, and runs the bundles above
// through the code cache; see src/cli/launcher.ts.
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
  define: {
    JP_VERSION: JSON.stringify(version),
    JP_CLIENT_BUNDLE_HASH: JSON.stringify(clientBundleHash),
    JP_SERVER_BUNDLE_HASH: JSON.stringify(serverBundleHash),
  },
  banner: { js: '#!/usr/bin/env node' },
  alias,
  logLevel: 'warning',
});
chmodSync(path.join(root, 'dist', 'jp.cjs'), 0o755);
