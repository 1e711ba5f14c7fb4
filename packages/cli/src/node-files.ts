// Names of a node folder's files, and the error for a configuration an operator must fix.
// Kept apart from load-config.ts (which loads zod and the backends) so that light commands
// and --help start fast.

export const CONFIG_FILE_NAME = 'memberkit.config.json';
/** The first-run configuration's token signing key (private, PEM), beside the configuration. */
export const DEV_KEY_FILE = 'dev-jwt-key.pem';
/** Its public key, which the first-run configuration trusts in auth.jwt.keys. */
export const DEV_PUBLIC_KEY_FILE = 'dev-jwt-key.pub.pem';
export const DEV_SUBJECT = 'CN=memberkit developer,DC=local';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
