import { badFlag } from './flag-settings.js';
import { parseText, type FieldRule } from './field-rules.js';
import { settingOptions, type SettingOption } from './option-table.js';

/** A setting's flag as a command registers it: the flags text, its help, and how its value is checked. */
export interface SettingFlag {
  /** `--rate <N>`, or `--allow-insecure-http` for a switch. */
  readonly flags: string;
  /** The row's help with its variable and default: `ceiling in requests per second (AMSYNC_RATE; default none, adaptive)`. */
  readonly help: string;
  /** Checks the value as it is parsed (a bad one is exit 64 naming the flag); absent for a switch. */
  readonly parse?: (value: string) => unknown;
}

/**
 * The flag of a setting, from its row of the option table: the help states the variable and the
 * default the settings actually use, so help, variables, defaults and checks cannot drift apart.
 */
export function settingFlag(flag: `--${string}`): SettingFlag {
  const option = settingOptions.find((o) => o.flag === flag);
  if (option === undefined || option.help === undefined) throw new Error(`${flag} is not a setting's flag with help in the option table`);
  const help = `${option.help}${sources(option)}`;
  if (option.switch === true) return { flags: flag, help };
  return { flags: `${flag} <${option.arg ?? 'VALUE'}>`, help, parse: checkedFlag(flag, option.rule) };
}

/** ` (AMSYNC_RATE; default 10)`: where else the value can come from, and what it is without one. */
function sources(option: SettingOption): string {
  const fallback = option.helpDefault ?? (option.default === undefined || option.switch === true ? undefined : String(option.default));
  const parts = [option.env, fallback === undefined ? undefined : `default ${fallback}`].filter((p) => p !== undefined);
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`;
}

/** A commander argParser that checks a flag's value against its settings rule. */
export function checkedFlag<T>(flag: string, rule: FieldRule<T>): (value: string) => T {
  return (value) => {
    const parsed = parseText(rule, value);
    if (!parsed.ok) throw badFlag(flag, parsed.expected, value);
    return parsed.value;
  };
}
