import { notifyEventNames, type NotifyEventName } from '../model/index.js';

export { notifyEventNames, type NotifyEventName } from '../model/index.js';


export type { NotifyChange, NotifyEvent, NotifySummary } from '../model/index.js';

export function isNotifyEventName(value: unknown): value is NotifyEventName {
  return typeof value === 'string' && (notifyEventNames as readonly string[]).includes(value);
}
