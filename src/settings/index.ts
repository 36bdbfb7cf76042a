export { defaultSettings, daemonModes, logLevels, type DaemonMode, type LogLevel, type Settings } from './settings.js';
export { settingsFileSchema, type SettingsLayer } from './settings-schema.js';
export { parseSettings, type ParseSettingsResult } from './parse-settings.js';
export { settingsEnvVars, settingsFromEnv, type EnvSettings } from './env-settings.js';
export { mergeSettings } from './merge-settings.js';
export { loadSettings, type SettingsSources } from './load-settings.js';
export { checkValue, parseText, rules, type FieldRule } from './field-rules.js';
export { renderSettingsSchema } from './settings-json-schema.js';
