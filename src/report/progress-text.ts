import type { Action, Change, Kind } from '../model/index.js';
import { quoteKey } from './render-value.js';

const still: Record<Action, string> = { create: 'still creating', update: 'still updating', delete: 'still deleting' };
const kindNames: Record<Kind, string> = { sshUser: 'SSH users', apikey: 'apikeys' };

/** `Listing: 1,200 SSH users, 40 apikeys in 3 pages · 2.5 pages/s`. */
export function listingProgress(listed: ReadonlyMap<Kind, { readonly pages: number; readonly items: number }>, seconds: number): string {
  const pages = [...listed.values()].reduce((n, k) => n + k.pages, 0);
  const kinds = [...listed].map(([kind, k]) => `${count(k.items)} ${kindNames[kind]}`);
  return `Listing: ${kinds.length > 0 ? kinds.join(', ') : 'nothing yet'} in ${count(pages)} page${pages === 1 ? '' : 's'} · ${rate(pages, seconds)} pages/s`;
}

/** `Applying: 40 of 100 done, 60 left · 12/s · 8 under way`. */
export function applyingProgress(done: number, total: number, underWay: number, seconds: number): string {
  return `Applying: ${count(done)} of ${count(total)} done, ${count(total - done)} left · ${rate(done, seconds)}/s · ${underWay} under way`;
}

/** `still creating sshUser "deploy"… [10s elapsed]`. */
export function stillLine(change: Pick<Change, 'action' | 'kind' | 'key'>, elapsedMs: number): string {
  return `${still[change.action]} ${change.kind} ${quoteKey(change.key)}… [${elapsed(elapsedMs)} elapsed]\n`;
}

/** `10s`, `1m20s`, as Terraform writes it. */
export function elapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${s % 60}s`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function rate(n: number, seconds: number): string {
  return seconds <= 0 ? '0' : (n / seconds).toFixed(n / seconds >= 10 ? 0 : 1);
}
