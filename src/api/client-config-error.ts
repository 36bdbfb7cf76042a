import { AmsyncError } from '../errors.js';

export type ClientConfigCode = 'invalid_url' | 'insecure_http' | 'invalid_option' | 'ca_file';

/** The client was configured wrongly; raised by `createClient` before any request is sent. */
export class ClientConfigError extends AmsyncError {
  declare readonly code: ClientConfigCode;

  constructor(code: ClientConfigCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'ClientConfigError';
  }
}
