/**
 * The environment of a tool subprocess (DESIGN §10): jp's own, minus the variables that hold
 * provider keys (`withheld`, see providerKeyVariables), except those the tool's configuration
 * passes through by name (`passThrough`, a tool's `env_vars`), plus literal values (`set`). Every
 * program jp starts for a tool or a server of tools gets its environment from here.
 */
export interface ToolEnvironmentOptions {
  /** Variables the subprocess must not see: the provider key variables. */
  withheld: readonly string[];
  /** Names passed through from `parent` even when withheld. */
  passThrough?: readonly string[];
  /** Literal values, set last. */
  set?: Record<string, string>;
}

export function toolEnvironment(parent: NodeJS.ProcessEnv, options: ToolEnvironmentOptions): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = { ...parent };
  const passed = new Set(options.passThrough ?? []);
  for (const name of options.withheld) if (!passed.has(name)) delete environment[name];
  return { ...environment, ...options.set };
}
