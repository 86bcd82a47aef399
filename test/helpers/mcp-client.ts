// The official MCP SDK's client side as an agent (Claude Desktop, VS Code) uses it against /mcp: an
// OAuthClientProvider kept in memory that discovers, registers itself (RFC 7591), sends the person to
// the authorization URL and keeps the tokens; the "person" is headless Chromium signing in and allowing.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export class MemoryOAuthProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** every authorization URL the SDK sent the person to */
  authorizationUrls: URL[] = [];
  readonly redirect: string;
  readonly name: string;
  constructor(redirect: string, name: string) {
    this.redirect = redirect;
    this.name = name;
  }
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * Connects a Client to `{base}/mcp` as an agent does the first time: the connect is refused (401), the
 * SDK discovers and registers and hands over the authorization URL; `authorize` plays the person (sign
 * in, Allow) and returns the code from the callback; the transport finishes the exchange; the client
 * connects again with its token.
 */
export async function connectWithOAuth(mcpUrl: string, provider: MemoryOAuthProvider, authorize: (url: URL) => Promise<string>): Promise<Client> {
  const first = new Client({ name: provider.name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  if (provider.tokens() === undefined) {
    try {
      await first.connect(transport);
      throw new Error('connected without authorization');
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
    }
    const url = provider.authorizationUrls.at(-1);
    if (!url) throw new Error('the SDK did not ask for authorization');
    await transport.finishAuth(await authorize(url));
  }
  const client = new Client({ name: provider.name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return client;
}
