// parseMultipart when the body itself fails in the middle of the object part (a proxy or a
// socket error, with no abort signal to tell the consumer): the parser is destroyed and leaves
// the part it was reading open (@fastify/busboy ends it neither with 'end' nor with an error),
// so parseMultipart must end it with the failure, or the consumer writing the object waits
// forever and the request never gets its answer.
import { describe, expect, it } from 'vitest';
import { DataONEException } from '@memberkit/types';
import { parseMultipart } from '../../src/http/multipart.js';

const BOUNDARY = 'body-failure-boundary';

/** A create body that sends the pid and part of the object, then fails. */
function failingBody(): ReadableStream<Uint8Array> {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="pid"\r\n\r\np1\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="object"; filename="o"\r\n\r\n`;
  let step = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (step === 0) controller.enqueue(new TextEncoder().encode(head));
      else if (step === 1) controller.enqueue(new Uint8Array(64 * 1024).fill(7));
      else {
        // Once the consumer has the bytes sent so far.
        await new Promise((resolve) => setTimeout(resolve, 200));
        controller.error(new Error('connection reset by the proxy'));
      }
      step++;
    },
  });
}

describe('parseMultipart, the body failing inside the object part', () => {
  it('rejects with InvalidRequest, and the consumer of the part sees the failure instead of waiting', async () => {
    const request = new Request('http://node/v2/object', {
      method: 'POST',
      body: failingBody(),
      headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      duplex: 'half',
    } as RequestInit);
    let consumed = 0;
    let consumerError: unknown;
    let abandoned = false;
    const parsing = parseMultipart('MNStorage.create', request, {
      streamName: 'object',
      onStream: async (stream) => {
        try {
          for await (const chunk of stream) consumed += chunk.byteLength;
        } catch (e) {
          consumerError = e;
          throw e;
        }
        return consumed;
      },
      onStreamAbandoned: async () => {
        abandoned = true;
      },
    });
    const outcome = await Promise.race([
      parsing.then(() => 'resolved', (e: unknown) => e),
      new Promise((resolve) => setTimeout(() => resolve('no answer within 5 s'), 5000)),
    ]);
    expect(outcome).toBeInstanceOf(DataONEException);
    expect((outcome as DataONEException).name).toBe('InvalidRequest');
    expect((outcome as DataONEException).description).toContain('interrupted');
    expect(consumed).toBeGreaterThan(0);
    expect(consumerError).toBeInstanceOf(Error);
    // The consumer failed, so there is nothing of it to undo.
    expect(abandoned).toBe(false);
  }, 15_000);
});
