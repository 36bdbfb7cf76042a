import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { sendRaw } from '../chaos/helpers/fuzz.js';

/**
 * Found by the chaos fuzz (test/chaos): node:http answered some requests itself with statuses
 * the service never uses (100 Continue, 417, 431, a bare 400), closed CONNECT without an
 * answer, and a CONNECT carrying a body kept `close()` of the emulator waiting forever. The
 * emulator answers only statuses of the spec's table, always with its error body.
 */

const TOKEN = 'edges-token';
let emu: RunningEmulator | undefined;

afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

async function raw(text: string | Buffer) {
  emu ??= await startEmulator({ tokens: [TOKEN] });
  return sendRaw(emu.port, { summary: 'raw', bytes: Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1'), head: false });
}

const list = (extra: string) => `GET /api/sshusers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n${extra}Connection: close\r\n\r\n`;

describe('the emulator answers every request with a status of the spec, even at the edges of HTTP', () => {
  it('an Expect header is ignored: no 100 Continue, no 417, the request is answered as any other', async () => {
    expect((await raw(list('Expect: 100-continue\r\n'))).statuses).toEqual([200]);
    expect((await raw(list('Expect: something-else\r\n'))).statuses).toEqual([200]);
  });

  it('a request node:http cannot parse gets a 400 with the error body (headers too large, a bad header, CL and TE together)', async () => {
    expect((await raw(list(`X-Big: ${'b'.repeat(20_000)}\r\n`))).statuses).toEqual([400]);
    expect((await raw(list('Bad Header: y\r\n'))).statuses).toEqual([400]);
    expect((await raw('POST /api/sshusers HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')).statuses).toEqual([400]);
    expect((await raw('FOO /api/sshusers HTTP/1.1\r\nHost: x\r\n\r\n')).statuses).toEqual([400]);
  });

  it('CONNECT gets a 405, and the emulator still closes at once when the client sent a body with it', async () => {
    const answer = await raw(Buffer.concat([Buffer.from('CONNECT /api/sshusers HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n'), Buffer.alloc(1024 * 1024, 0x41)]));
    expect(answer.statuses).toEqual([405]);
    let closed = false;
    const closing = emu!.close().then(() => (closed = true));
    // Bounded: a hung close() fails here instead of timing the test out.
    for (let i = 0; i < 100 && !closed; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(closed).toBe(true);
    await closing;
    emu = undefined;
  });
});
