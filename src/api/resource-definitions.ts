import type { ActualSshUser, ApikeyChanges, ListedApikey, NewApikey, NewSshUser, SecretValue, SshUserChanges } from '../model/index.js';
import { hashStart, hashText, hashValue } from './paginate.js';
import type { ResourceDefinition, WireBody } from './resource.js';
import { apikeyPageSchema, apikeySchema, sshUserPageSchema, sshUserSchema } from './schemas.js';

/** Serialises a body, revealing secrets here and only here, and lists them for scrubbing. */
function wire(fields: Record<string, unknown>): WireBody {
  const secrets: string[] = [];
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (value !== null && typeof value === 'object' && 'reveal' in value && typeof value.reveal === 'function') {
      const revealed = (value as SecretValue).reveal();
      secrets.push(revealed);
      plain[key] = revealed;
    } else {
      plain[key] = value;
    }
  }
  return { json: JSON.stringify(plain), secrets };
}

export const sshUsers: ResourceDefinition<ActualSshUser, NewSshUser, SshUserChanges> = {
  kind: 'sshUser',
  route: '/api/sshusers',
  itemSchema: sshUserSchema,
  pageSchema: sshUserPageSchema,
  idOf: (user) => user.id,
  contentOf: (user) => hashText(hashText(hashStart, user.username), user.level),
  serialiseNew: (body) => wire({ username: body.username, level: body.level, password: body.password }),
  serialiseChanges: (body) => wire({ username: body.username, level: body.level, password: body.password }),
  createdOutcome: (user) => ({ id: user.id, accepted: false }),
};

export const apikeys: ResourceDefinition<ListedApikey, NewApikey, ApikeyChanges> = {
  kind: 'apikey',
  route: '/api/3rdparty/apikeys',
  itemSchema: apikeySchema,
  pageSchema: apikeyPageSchema,
  idOf: (apikey) => apikey.id,
  contentOf: (apikey) => {
    let hash = hashValue(hashText(hashStart, apikey.name), apikey.superuser);
    for (const role of apikey.roles) hash = hashValue(hash, role);
    return hash;
  },
  serialiseNew: (body) => wire({ name: body.name, superuser: body.superuser, roles: body.roles === undefined ? undefined : [...body.roles] }),
  serialiseChanges: (body) => wire({ name: body.name, superuser: body.superuser, roles: body.roles === undefined ? undefined : [...body.roles] }),
  createdOutcome: (key) => ({ id: key.id, accepted: false, ...(key.token === undefined ? {} : { token: key.token }) }),
};
