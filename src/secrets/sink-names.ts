import { InvalidInputError } from '../errors.js';
import { diagnosticCodes, type DesiredState, type Diagnostic } from '../model/index.js';
import type { SecretSink } from './secret-sink.js';

/**
 * Every declared item whose secret the sink could never store under its name, one error each
 * at the item: an SSH user's generated password (`password: {generate}`), an apikey's token.
 * The sink says why (SecretSink.nameProblem: the file name or data key it would write, made as
 * it writes it). Such an item must be refused before anything is sent: a password set on the
 * service with nowhere to go is lost, and would be set again on every run; a token returned by
 * a create likewise. Empty without a sink (nothing is stored).
 */
export function sinkNameFindings(desired: DesiredState, sink: SecretSink | undefined): Diagnostic[] {
  if (sink === undefined) return [];
  const out: Diagnostic[] = [];
  const generating = desired.sshUsers.some((u) => u.ensure === 'present' && u.passwordGenerated !== undefined);
  const passwords = generating ? sink.passwordSink?.() : undefined;
  if (passwords !== undefined) {
    desired.sshUsers.forEach((user, i) => {
      if (user.ensure !== 'present' || user.passwordGenerated === undefined) return;
      const why = passwords.nameProblem(user.username);
      if (why === undefined) return;
      out.push(finding(`SSH user "${user.username}": its generated password cannot be stored in the password sink, ${passwords.describe}: ${why}; shorten the username`, `sshUsers[${i}].username`, user.source));
    });
  }
  desired.apikeys.forEach((key, i) => {
    if (key.ensure !== 'present') return;
    const why = sink.nameProblem(key.name);
    if (why === undefined) return;
    out.push(finding(`apikey "${key.name}": its token cannot be stored in the token sink, ${sink.describe}: ${why}; shorten the name`, `apikeys[${i}].name`, key.source));
  });
  return out;
}

/** sinkNameFindings, as the refusal of a run: exit 65, nothing sent. */
export function checkSinkNames(desired: DesiredState, sink: SecretSink | undefined): void {
  const findings = sinkNameFindings(desired, sink);
  if (findings.length === 0) return;
  const n = findings.length;
  throw new InvalidInputError(`the secret of ${n} declared item${n === 1 ? '' : 's'} cannot be stored in ${sink!.describe} under its name; nothing was sent`, findings, diagnosticCodes.sinkName);
}

function finding(message: string, path: string, position: Diagnostic['position']): Diagnostic {
  return { severity: 'error', code: diagnosticCodes.sinkName, message, path, ...(position ? { position } : {}) };
}
