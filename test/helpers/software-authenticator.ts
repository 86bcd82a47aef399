// A software WebAuthn authenticator for tests below the browser: a real ES256 key pair (P-256), real
// authenticator data, "none" attestation and DER signatures — what a platform authenticator sends, so
// @simplewebauthn/server verifies it exactly as it verifies a browser's answer. Settings let a test
// make the answers a real authenticator could make: without user verification, for another origin,
// with a counter that does not grow.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

function sha256(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(data).digest();
}

function b64url(data: Uint8Array | string): string {
  return Buffer.from(data).toString('base64url');
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

export type AnswerOverrides = {
  /** the origin the browser would report (default: the one given) */
  origin?: string;
  /** the RP ID whose hash goes into the authenticator data (default: the options' RP ID) */
  rpId?: string;
  /** sign this challenge instead of the options' one */
  challenge?: string;
  /** report this counter (default: one more than last time, or 0 for a counterless authenticator) */
  counter?: number;
};

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private counter = 0;
  private userHandle: string | undefined;
  private rpId: string | undefined;
  /** whether it verifies the person (PIN, biometric) — sets the UV flag */
  userVerified: boolean;
  /** whether its signature counter grows with each use (many passkeys keep it at 0) */
  readonly counts: boolean;

  constructor(options: { userVerified?: boolean; counts?: boolean } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicKey = publicKey;
    this.userVerified = options.userVerified ?? true;
    this.counts = options.counts ?? true;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  private flags(extra = 0): number {
    return UP | (this.userVerified ? UV : 0) | extra;
  }

  private coseKey(): Uint8Array {
    const jwk = this.publicKey.export({ format: 'jwk' });
    const key = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]);
    return isoCBOR.encode(key);
  }

  /** navigator.credentials.create's answer, as @simplewebauthn/browser would send it. */
  register(options: PublicKeyCredentialCreationOptionsJSON, origin: string, overrides: AnswerOverrides = {}): RegistrationResponseJSON {
    this.rpId = options.rp.id ?? new URL(origin).hostname;
    this.userHandle = options.user.id;
    const clientData = JSON.stringify({ type: 'webauthn.create', challenge: overrides.challenge ?? options.challenge, origin: overrides.origin ?? origin, crossOrigin: false });
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([sha256(overrides.rpId ?? this.rpId), Buffer.from([this.flags(AT)]), counterBytes(0), Buffer.alloc(16), idLength, this.credentialId, this.coseKey()]);
    const attestationObject = isoCBOR.encode(new Map<string, string | Uint8Array | Map<string, never>>([
      ['fmt', 'none'],
      ['attStmt', new Map<string, never>()],
      ['authData', new Uint8Array(authData)],
    ]));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(clientData), attestationObject: b64url(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get's answer (with the user handle, as a discoverable credential sends it). */
  assert(options: PublicKeyCredentialRequestOptionsJSON, origin: string, overrides: AnswerOverrides = {}): AuthenticationResponseJSON {
    const rpId = overrides.rpId ?? options.rpId ?? this.rpId ?? new URL(origin).hostname;
    const counter = overrides.counter ?? (this.counts ? ++this.counter : 0);
    const clientData = JSON.stringify({ type: 'webauthn.get', challenge: overrides.challenge ?? options.challenge, origin: overrides.origin ?? origin, crossOrigin: false });
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags()]), counterBytes(counter)]);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(clientData), authenticatorData: b64url(authData), signature: b64url(signature), ...(this.userHandle ? { userHandle: this.userHandle } : {}) },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
