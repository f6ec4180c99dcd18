/**
 * `ui.theme` as the configuration's layers give it (the later layer wins), read from the written
 * layers without the schema library: the terminal client needs it before the first byte it draws,
 * and nothing else of the configuration.
 */
import { isTable } from './cascade.ts';
import { writtenLayers, type ConfigInputs } from './layers.ts';

export type ConfiguredTheme = 'dark' | 'light';

/** The theme the last layer that names a valid one names; undefined when none does. */
export function configuredTheme(inputs: ConfigInputs): ConfiguredTheme | undefined {
  let theme: ConfiguredTheme | undefined;
  for (const layer of writtenLayers(inputs, 'lenient')) {
    const value = isTable(layer.value.ui) ? layer.value.ui.theme : undefined;
    if (value === 'dark' || value === 'light') theme = value;
  }
  return theme;
}
