import type { Secret } from '../secrets/index.js';
import { settingGroups as groups } from './option-table.js';
import type { Settings } from './settings.js';
import type { SettingsLayer } from './settings-schema.js';


/**
 * Later layers win, key by key; the groups (http, retry, daemon, notify) merge key by key too
 * (a list such as notify.webhooks is replaced whole).
 * `undefined` leaves a value alone; `null` unsets an optional one.
 */
export function mergeSettings(base: Settings, layers: readonly SettingsLayer[], token?: Secret, refreshToken?: Secret): Settings {
  const out: Record<string, unknown> = { ...base };
  for (const group of groups) out[group] = { ...base[group] };
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if ((groups as readonly string[]).includes(key) && value !== null) {
        const target = out[key] as Record<string, unknown>;
        for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) {
          if (innerValue === undefined) continue;
          if (innerValue === null) delete target[inner];
          else target[inner] = innerValue;
        }
        continue;
      }
      if (value === null) delete out[key];
      else out[key] = value;
    }
  }
  if (token) out.token = token;
  if (refreshToken) out.refreshToken = refreshToken;
  return out as unknown as Settings;
}
