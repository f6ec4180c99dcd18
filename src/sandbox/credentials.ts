/**
 * The user's credentials no sandboxed command may see, relative to the home directory (DESIGN §10).
 * Reviewed against firejail's maintained `etc/inc/disable-common.inc` (its "top secret", "cloud
 * provider configuration" and history sections), extended with the package-registry, cloud and
 * cluster tools an agent's commands meet. `sandbox.hidden_paths` adds more; nothing removes one.
 * A path that does not exist costs one lstat and no mount.
 */

const keysAndAgents = ['.ssh', '.gnupg', '.pki', '.local/share/pki', '.cert'];

const git = [
  '.git-credentials',
  '.git-credential-cache',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  '.config/glab-cli',
  '.netrc',
];

const packageRegistries = [
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.m2/settings.xml',
  '.m2/settings-security.xml',
  '.gradle/gradle.properties',
  '.nuget/NuGet/NuGet.Config',
  '.config/NuGet/NuGet.Config',
  '.gem/credentials',
  '.local/share/gem/credentials',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.pub-cache/credentials.json',
  '.config/dart/pub-credentials.json',
  '.docker/config.json',
  '.config/containers/auth.json',
];

const cloudAndClusters = [
  '.aws',
  '.azure',
  '.config/gcloud',
  '.boto',
  '.s3cfg',
  '.passwd-s3fs',
  '.kube',
  '.oci',
  '.config/doctl',
  '.config/hcloud',
  '.config/linode-cli',
  '.aliyun',
  '.bluemix',
  '.vault-token',
  '.terraform.d/credentials.tfrc.json',
  '.terraformrc',
  '.config/op',
  '.op',
  '.config/heroku',
  '.fly',
  '.config/netlify',
  '.config/vercel',
  '.claude/.credentials.json',
  '.codex/auth.json',
];

const passwordStoresAndKeyrings = [
  '.password-store',
  '.local/share/keyrings',
  '.local/share/kwalletd',
  '.gnome2/keyrings',
  '.kde/share/apps/kwallet',
  '.kde4/share/apps/kwallet',
  '.local/share/plasma-vault',
  '.keepass',
  '.config/keepassxc',
  '.config/Bitwarden',
  '.config/Bitwarden CLI',
  '.lastpass',
  'Library/Keychains',
  '.smbcredentials',
  '.fetchmailrc',
  '.msmtprc',
];

const browserProfiles = [
  '.mozilla',
  '.librewolf',
  '.config/google-chrome',
  '.config/google-chrome-beta',
  '.config/chromium',
  '.config/BraveSoftware',
  '.config/microsoft-edge',
  '.config/vivaldi',
  '.config/opera',
  'snap/firefox',
  'snap/chromium',
  '.var/app/org.mozilla.firefox',
  '.var/app/com.google.Chrome',
  'Library/Application Support/Firefox',
  'Library/Application Support/Google/Chrome',
  'Library/Application Support/BraveSoftware',
  'Library/Application Support/Microsoft Edge',
  'Library/Cookies',
  'Library/Safari',
];

const histories = [
  '.local/share/fish/fish_history',
  '.histfile',
  '.history',
  '.lesshst',
  '.viminfo',
  '.python_history',
  '.pythonhist',
  '.node_repl_history',
  '.ts_node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.irb_history',
  '.pry_history',
  '.Rhistory',
  '.julia/logs/repl_history.jl',
  '.local/share/jupyter/runtime',
];

/** Fixed paths, relative to the home directory. */
export const credentialPaths: readonly string[] = [
  ...keysAndAgents,
  ...git,
  ...packageRegistries,
  ...cloudAndClusters,
  ...passwordStoresAndKeyrings,
  ...browserProfiles,
  ...histories,
];

/**
 * Names directly in the home directory that are histories whatever the program: `.bash_history`, `.zsh_history`,
 * `.sh_history`...
 */
export function isHistoryName(name: string): boolean {
  return name.startsWith('.') && /(?:_history|_hist|history\.txt)$/i.test(name);
}
