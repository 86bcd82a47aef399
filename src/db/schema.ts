// Table types for Kysely. Portable across SQLite and PostgreSQL: times are epoch milliseconds
// (bigint, read back as numbers), flags are 0/1 integers, lists are JSON text.
import type { GeneratedAlways } from 'kysely';

export type Flag = 0 | 1;

export interface UsersTable {
  sub: string;
  email: string | null;
  email_verified: Flag;
  phone_number: string | null;
  phone_number_verified: Flag;
  name: string | null;
  picture: string | null;
  password_hash: string;
  disabled: Flag;
  created_at: number;
  updated_at: number;
}

export interface ClientsTable {
  client_id: string;
  name: string;
  /** keyed hash of the secret; null for a public client */
  secret_hash: string | null;
  /** JSON array of strings, compared byte for byte */
  redirect_uris: string;
  /** JSON array of scope names */
  scopes: string;
  is_public: Flag;
  enabled: Flag;
  /** JSON array of origins allowed to call the token endpoint from a browser */
  allowed_origins: string;
  created_at: number;
  updated_at: number;
  /** issue 28: an id_token when it asks for `openid` (0: the spec's rule 5, none ever) */
  oidc?: Flag;
  /** JSON array of RP-initiated logout callbacks, compared byte for byte */
  post_logout_redirect_uris?: string;
  /** 'ES256' | 'RS256', or null for the deployment's default */
  id_token_alg?: string | null;
  /** issue 43: JSON array of the extra grants ("client_credentials", "device_code"); '[]': the spec's two */
  grants?: string;
  /** issue 43: the service identity (a users row that cannot sign in) of an application with client_credentials */
  service_sub?: string | null;
  /** issue 39: 1 when the application registered itself (RFC 7591, POST /oauth/register) */
  dynamic?: Flag;
  /** issue 39: JSON of the RFC 7591 metadata a dynamic client registered, or null */
  registration?: string | null;
}

export interface SessionsTable {
  id_hash: string;
  sub: string;
  created_at: number;
  expires_at: number;
  /** the browser's User-Agent at sign-in (shortened), for the person's list of sessions */
  user_agent: string | null;
  /** the client address at sign-in */
  ip: string | null;
  /** when this session last proved the password or a second factor (sign-in, a step-up confirmation) */
  checked_at: number | null;
  /** JSON array of the sign-in's methods (RFC 8176: pwd, otp, hwk, mfa …); null before migration 0011 */
  amr?: string | null;
  /** a public id of the session for the id_token's `sid` (never the cookie value) */
  sid?: string | null;
}

export interface AuthorizationRequestsTable {
  id_hash: string;
  client_id: string;
  redirect_uri: string;
  scope: string;
  state: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  /** the origin of the host that received /oauth/authorize */
  origin: string;
  created_at: number;
  expires_at: number;
  completed_at: number | null;
  /** JSON of the OpenID request parameters (nonce, max_age, prompt, acr_values, login_hint), or null */
  oidc?: string | null;
  /** issue 39: the RFC 8707 `resource` asked for, or null */
  resource?: string | null;
}

export interface GrantsTable {
  sub: string;
  client_id: string;
  scope: string;
  first_authorized_at: number;
  updated_at: number;
  muted: Flag;
}

export interface AuthorizationCodesTable {
  code_hash: string;
  client_id: string;
  sub: string;
  redirect_uri: string;
  scope: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  /** every token issued from this code carries it, so a replayed code can revoke them */
  chain_id: string;
  created_at: number;
  expires_at: number;
  redeemed_at: number | null;
}

export interface AccessTokensTable {
  token_hash: string;
  client_id: string;
  sub: string;
  scope: string;
  chain_id: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** One refresh chain (migration 0010): its tokens carry its id and a generation under a MAC. */
export interface TokenChainsTable {
  id: string;
  client_id: string;
  sub: string;
  scope: string;
  generation: number;
  created_at: number;
  expires_at: number;
  rotated_at: number | null;
  issuance: string;
  refresh_revoked_at: number | null;
  revoked_at: number | null;
  legacy_chain_id: string | null;
  /** generation 0 (an authorization code not yet redeemed): the code's end, redirect URI and PKCE challenge */
  code_expires_at: number | null;
  redirect_uri: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  /** JSON of what the chain's id_tokens say about the sign-in (iss, nonce, auth_time, amr, acr, sid), or null */
  id_token_context?: string | null;
  /** issue 43: "client_credentials" or "device_code"; null (or absent): an authorization code's chain */
  grant_type?: string | null;
  /** issue 39: the RFC 8707 resource the code and every token of the chain are for, or null */
  resource?: string | null;
}

/** An id_token signing key (migration 0011). */
export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: string;
  private_key_enc: string;
  created_at: number;
  rotated_at: number | null;
}

export interface RevokedAccessTokensTable {
  id: string;
  expires_at: number;
}

export interface RefreshTokensTable {
  token_hash: string;
  client_id: string;
  sub: string;
  scope: string;
  chain_id: string;
  created_at: number;
  /** inherited from the first token of the chain: rotation never extends it */
  chain_expires_at: number;
  rotated_at: number | null;
  revoked_at: number | null;
}

export interface SigninThrottleTable {
  /** "account:<sub>" or "address:<ip>" */
  key: string;
  failures: number;
  window_started_at: number;
  locked_until: number | null;
}

export type TaskKind = 'translate' | 'docparse';
export type TaskStatus = 'queued' | 'running' | 'finished' | 'failed' | 'cancelled';

export interface TasksTable {
  /** a UUID: safe on a command line, unguessable */
  id: string;
  sub: string;
  kind: TaskKind;
  status: TaskStatus;
  /** the owner's page language when the task was created: its notification is written in it */
  locale: string;
  source_name: string;
  source_size: number;
  source_pages: number;
  source_lang: string | null;
  target_lang: string | null;
  /** translate tasks: the glossary as JSON ({"term": "translation"}), or null */
  glossary: string | null;
  progress_done: number;
  progress_total: number;
  /** when failed: what happened and what to do, in words a person can act on */
  error: string | null;
  /** JSON array of {name, size, content_type}: the result files, stored under tasks/<id>/<name> */
  files: string;
  /** when finished: JSON array of sentences about what the result lacks and why (pages without text …), or null */
  notes: string | null;
  /** how many times a worker has claimed it (a lease that expired counts) */
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface NotificationsTable {
  id: string;
  seq: number;
  sub: string;
  category: string;
  title: string;
  body: string;
  link: string | null;
  /** the application the notification is about, if any (muting it suppresses every delivery) */
  client_id: string | null;
  locale: string;
  created_at: number;
  read_at: number | null;
}

export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'suppressed';

export interface NotificationDeliveriesTable {
  notification_id: string;
  channel: string;
  status: DeliveryStatus;
  /** why it failed or was suppressed */
  reason: string | null;
  attempts: number;
  next_attempt_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  updated_at: number;
}

export interface NotificationPreferencesTable {
  sub: string;
  category: string;
  channel: string;
  enabled: Flag;
  updated_at: number;
}

export interface Database {
  users: UsersTable;
  clients: ClientsTable;
  sessions: SessionsTable;
  authorization_requests: AuthorizationRequestsTable;
  grants: GrantsTable;
  authorization_codes: AuthorizationCodesTable;
  access_tokens: AccessTokensTable;
  refresh_tokens: RefreshTokensTable;
  token_chains: TokenChainsTable;
  revoked_access_tokens: RevokedAccessTokensTable;
  signing_keys: SigningKeysTable;
  signin_throttle: SigninThrottleTable;
  tasks: TasksTable;
  notifications: NotificationsTable;
  notification_deliveries: NotificationDeliveriesTable;
  notification_preferences: NotificationPreferencesTable;
  admin_keys: AdminKeysTable;
  audit_events: AuditEventsTable;
  account_tokens: AccountTokensTable;
  mail_outbox: MailOutboxTable;
  account_request_counters: AccountRequestCountersTable;
  passkeys: PasskeysTable;
  passkey_challenges: PasskeyChallengesTable;
  second_factors: SecondFactorsTable;
  recovery_codes: RecoveryCodesTable;
  second_steps: SecondStepsTable;
  account_roles: AccountRolesTable;
  console_sessions: ConsoleSessionsTable;
  upstream_providers: UpstreamProvidersTable;
  upstream_links: UpstreamLinksTable;
  upstream_states: UpstreamStatesTable;
  upstream_pending_links: UpstreamPendingLinksTable;
  imported_passwords: ImportedPasswordsTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  device_authorizations: DeviceAuthorizationsTable;
}

/** issue 43: an RFC 8628 device authorization (migration 0018; oauth/device/). */
export interface DeviceAuthorizationsTable {
  device_code_hash: string;
  user_code_hash: string;
  client_id: string;
  scope: string;
  created_at: number;
  expires_at: number;
  interval_seconds: number;
  last_polled_at: number | null;
  status: 'pending' | 'approved' | 'denied' | 'redeemed';
  sub: string | null;
  granted_scope: string | null;
  decided_at: number | null;
  confirm_hash: string | null;
}

/** A password brought in by `signet import` (migration 0014; accounts/imported-passwords.store.ts). */
export interface ImportedPasswordsTable {
  sub: string;
  algorithm: string;
  scheme: string;
  foreign_hash: string | null;
  source_fingerprint: string;
  imported_at: number;
  replaced_at: number | null;
}

/** Who holds which role (migration 0012): "operator" opens the admin console. */
export interface AccountRolesTable {
  sub: string;
  role: string;
  granted_at: number;
}

/** A session of the admin console on the admin listener (admin/console/console-sessions.ts). */
export interface ConsoleSessionsTable {
  id_hash: string;
  sub: string;
  created_at: number;
  last_seen_at: number;
  checked_at: number;
  expires_at: number;
  ip: string | null;
}

/** A running `signet worker` (migration 0015): renewed every few seconds, deleted when it stops. */
export interface WorkerHeartbeatsTable {
  id: string;
  host: string;
  pid: number;
  /** JSON array: task kinds and/or "email" */
  work: string;
  slots: number;
  version: string;
  started_at: number;
  last_seen_at: number;
}

/** An authenticator app (accounts/factors/totp.ts). */
export interface SecondFactorsTable {
  id: string;
  sub: string;
  kind: string;
  name: string;
  /** the TOTP secret, AES-256-GCM encrypted under keys.factorSecret */
  secret_enc: string;
  /** null while being set up */
  enabled_at: number | null;
  created_at: number;
  last_used_at: number | null;
  /** the last accepted TOTP time step (replay) */
  last_step: number | null;
}

/** One single-use recovery code, as a keyed hash (accounts/factors/recovery-codes.ts). */
export interface RecoveryCodesTable {
  code_hash: string;
  sub: string;
  created_at: number;
  used_at: number | null;
}

/** The half-signed-in state between a correct password and the second step (accounts/factors/second-step.ts). */
export interface SecondStepsTable {
  id_hash: string;
  sub: string;
  purpose: 'verify' | 'enrol';
  request_id: string | null;
  return_to: string | null;
  created_at: number;
  expires_at: number;
  /** JSON array of the first step's amr values (migration 0013); null: a password */
  first_factor?: string | null;
}

/** An operator key of the admin API (`signet admin-key create`). */
export interface AdminKeysTable {
  /** "ak_" + 16 hex characters; the public half of the key */
  id: string;
  name: string;
  /** keyed hash of the secret half */
  key_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** One audit event; see src/audit/audit.ts for the types, outcomes and detail keys. */
export interface AuditEventsTable {
  /** assigned by the database, ever increasing: the order and the cursor */
  id: GeneratedAlways<number>;
  type: string;
  at: number;
  sub: string | null;
  client_id: string | null;
  ip: string | null;
  outcome: string;
  /** who made the change: "cli", "admin_key:<id>", or null when it is the person themselves */
  actor: string | null;
  /** JSON object of whitelisted keys */
  detail: string | null;
}

/** A single-use link for resetting a password or verifying an e-mail address (accounts/account-tokens.ts). */
export interface AccountTokensTable {
  token_hash: string;
  purpose: string;
  sub: string;
  /** the address the link was sent to */
  email: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'suppressed';

/** Account mail (reset and verification links) waiting for, or sent by, `signet worker` (accounts/mail/). */
export interface MailOutboxTable {
  id: string;
  kind: string;
  sub: string | null;
  to_address: string | null;
  locale: string;
  created_at: number;
  link_expires_at: number | null;
  status: OutboxStatus;
  reason: string | null;
  attempts: number;
  next_attempt_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  updated_at: number;
}

/** How many requests of one kind a key (an address, an account) made in the current window. */
export interface AccountRequestCountersTable {
  key: string;
  count: number;
  window_started_at: number;
}

/** A person's passkey (accounts/factors/passkeys.ts): the credential's public half and its use. */
export interface PasskeysTable {
  id: string;
  sub: string;
  /** base64url, as the browser reports it */
  credential_id: string;
  /** base64url COSE key */
  public_key: string;
  counter: number;
  /** JSON array of transports, or null */
  transports: string | null;
  /** the host it was made on (each served host is its own relying party) */
  rp_id: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** An open WebAuthn ceremony: the keyed hash of its challenge, single use, five minutes. */
export interface PasskeyChallengesTable {
  challenge_hash: string;
  purpose: string;
  sub: string | null;
  rp_id: string;
  created_at: number;
  expires_at: number;
}

/** issue 33: an upstream identity provider (migration 0013). */
export interface UpstreamProvidersTable {
  slug: string;
  name: string;
  kind: 'oidc' | 'github';
  preset: string | null;
  issuer: string;
  client_id: string;
  client_secret_sealed: string;
  scope: string;
  enabled: Flag;
  created_at: number;
  updated_at: number;
}

/** An upstream identity bound to an account by (provider, upstream sub). */
export interface UpstreamLinksTable {
  provider_slug: string;
  upstream_sub: string;
  sub: string;
  email: string | null;
  linked_at: number;
  last_used_at: number | null;
}

/** A sign-in sent to an upstream, until its callback (single use). */
export interface UpstreamStatesTable {
  state_hash: string;
  provider_slug: string;
  sealed: string;
  origin: string;
  created_at: number;
  expires_at: number;
}

/** An upstream identity whose e-mail names an existing account, waiting for that account's password. */
export interface UpstreamPendingLinksTable {
  id_hash: string;
  provider_slug: string;
  sub: string;
  sealed: string;
  origin: string;
  created_at: number;
  expires_at: number;
}
