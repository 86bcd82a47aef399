// The JSON error of a path, for answers given before any route runs (the host check, Fastify's own
// parse errors): OAuth's `{error, error_description}` under /oauth/ (RFC 6749 §5.2), so a client
// library reads it as it reads the endpoint's own errors; `{error, message}` everywhere else.

export function errorPayload(url: string | undefined, error: string, message: string): Record<string, string> {
  return (url ?? '').startsWith('/oauth/') ? { error, error_description: message } : { error, message };
}
