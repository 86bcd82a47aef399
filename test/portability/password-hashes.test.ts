// The forms of foreign password hashes Signet reads, checked against published test vectors and the
// algorithms' own libraries; parameters past the limits are refused at import, not at sign-in.
import assert from 'node:assert/strict';
import { pbkdf2Sync, scryptSync } from 'node:crypto';
import { test } from 'node:test';
import { hash as argon2Hash } from '@node-rs/argon2';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { parsePasswordHash, PasswordHashError, sampleHashOf, verifyForeignHash } from '../../src/accounts/password-hashes.ts';
import { hashPassword } from '../../src/accounts/passwords.ts';
import { jsonArrayElements } from '../../src/portability/json-array.ts';
import { readAuth0 } from '../../src/portability/auth0.ts';
import { detectFormat } from '../../src/portability/import.ts';
import { argon2iOf, djangoPbkdf2, passlibScrypt } from './foreign-files.ts';

const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');

test('bcrypt: the OpenBSD test vector ($2a$05$…, "U*U") verifies; $2y$ reads as $2b$ does', async () => {
  const vector = parsePasswordHash('$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW');
  assert.equal(vector.scheme, 'bcrypt$5');
  assert.equal(await verifyForeignHash(vector.encoded, 'U*U'), true);
  assert.equal(await verifyForeignHash(vector.encoded, 'U*V'), false);
  const made = await bcryptHash('pa55word', 4);
  assert.equal(await verifyForeignHash(parsePasswordHash(made.replace(/^\$2b\$/, '$2y$')).encoded, 'pa55word'), true);
});

test('PBKDF2-HMAC-SHA256: the RFC 7914 §11 vector (P="passwd", S="salt", c=1, 64 bytes) verifies as a PHC string', async () => {
  const hash = Buffer.from('55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783', 'hex');
  const parsed = parsePasswordHash(`$pbkdf2-sha256$i=1,l=64$${b64(Buffer.from('salt'))}$${b64(hash)}`);
  assert.equal(parsed.scheme, 'pbkdf2-sha256$i=1,l=64');
  assert.equal(await verifyForeignHash(parsed.encoded, 'passwd'), true);
  assert.equal(await verifyForeignHash(parsed.encoded, 'passwe'), false);
});

test('scrypt: the RFC 7914 §12 vector (P="password", S="NaCl", N=1024, r=8, p=16) verifies; passlib\'s $scrypt$ln=… form too', async () => {
  const hash = Buffer.from('fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640', 'hex');
  const parsed = parsePasswordHash(`$scrypt$n=1024,r=8,p=16$${b64(Buffer.from('NaCl'))}$${b64(hash)}`);
  assert.equal(await verifyForeignHash(parsed.encoded, 'password'), true);
  assert.equal(await verifyForeignHash(parsed.encoded, 'passwore'), false);
  assert.equal(await verifyForeignHash(parsePasswordHash(passlibScrypt('passlib pw')).encoded, 'passlib pw'), true);
  assert.equal(scryptSync('x', 'y', 16).length, 16);
});

test('argon2 i, d and id from the argon2 library verify; Signet\'s own parameters read as native (nothing to replace)', async () => {
  for (const algorithm of [0, 1, 2] as const) {
    const made = await argon2Hash('argon pw', { algorithm, memoryCost: 1024, timeCost: 2, parallelism: 1 });
    const parsed = parsePasswordHash(made);
    assert.equal(parsed.native, false);
    assert.equal(await verifyForeignHash(parsed.encoded, 'argon pw'), true, made);
    assert.equal(await verifyForeignHash(parsed.encoded, 'argon px'), false);
  }
  assert.equal(parsePasswordHash(await argon2iOf('x')).algorithm, 'argon2');
  const own = parsePasswordHash(await hashPassword('own password'));
  assert.deepEqual([own.native, own.algorithm, own.scheme], [true, 'signet', 'signet']);
});

test("Django's pbkdf2_sha256$… (the salt as text) verifies", async () => {
  const django = parsePasswordHash(djangoPbkdf2('django pw', 1000));
  assert.equal(django.algorithm, 'pbkdf2-sha256');
  assert.equal(await verifyForeignHash(django.encoded, 'django pw'), true);
  assert.equal(await verifyForeignHash(django.encoded, 'django px'), false);
  assert.ok(pbkdf2Sync('a', 'b', 1, 32, 'sha256'));
});

test('fails because the parameters would make one sign-in occupy the machine, or the text is no hash: refused at import with the reason', () => {
  const refused: Array<[string, RegExp]> = [
    ['$2b$20$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', /bcrypt cost 20/],
    [`$pbkdf2-sha256$i=99000000,l=32$${b64(Buffer.alloc(16))}$${b64(Buffer.alloc(32))}`, /iteration count/],
    [`$scrypt$n=1048576,r=8,p=1$${b64(Buffer.alloc(16))}$${b64(Buffer.alloc(32))}`, /MiB/],
    [`$argon2id$v=19$m=4194304,t=3,p=1$${b64(Buffer.alloc(16))}$${b64(Buffer.alloc(32))}`, /memory/],
    ['5f4dcc3b5aa765d61d8327deb882cf99', /none of bcrypt/],
    ['$1$saltsalt$abcdefghijklmnopqrstuv', /none of bcrypt/],
  ];
  for (const [text, reason] of refused) assert.throws(() => parsePasswordHash(text), (e: unknown) => e instanceof PasswordHashError && reason.test(e.message), text);
});

test('a sample hash of each scheme costs a real check (what a failed sign-in waits for) and matches nothing', async () => {
  for (const scheme of ['bcrypt$4', 'pbkdf2-sha512$i=1000,l=64', 'scrypt$n=1024,r=8,p=1,l=32', 'argon2id$v=19,m=1024,t=2,p=1,l=32']) {
    const sample = sampleHashOf(scheme);
    assert.ok(sample, scheme);
    assert.equal(parsePasswordHash(sample).scheme, scheme, 'the sample is of the same scheme');
    assert.equal(await verifyForeignHash(sample, 'anything'), false);
  }
});

async function* chunksOf(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

test('the JSON array reader gives each element with the line it starts on, whatever the chunk boundaries, past strings that look like keys or brackets', async () => {
  const doc = '{\n  "realm": "x",\n  "clients": [{"note": "\\"users\\": [ ]"}],\n  "users": [\n    {"email": "a@example.com", "s": "]}{["},\n    {"email": "b@example.com"},\n    7\n  ],\n  "after": [1]\n}\n';
  for (const size of [1, 2, 3, 7, 64, 1000]) {
    const out = [];
    for await (const element of jsonArrayElements(chunksOf(doc, size), { key: 'users' })) out.push(element);
    assert.deepEqual(out, [
      { line: 5, value: { email: 'a@example.com', s: ']}{[' } },
      { line: 6, value: { email: 'b@example.com' } },
      { line: 7, value: 7 },
    ], `chunks of ${size}`);
  }
  const cut = [];
  for await (const element of jsonArrayElements(chunksOf('[\n{"a": 1},\n{"b": ', 4), { topLevel: true })) cut.push(element);
  assert.deepEqual(cut[0], { line: 2, value: { a: 1 } });
  assert.match(String((cut[1] as { error: string }).error), /ends inside the array/);
});

test('--format "defaults to what the file is": Signet export, Keycloak realm, Auth0 array, CSV', () => {
  assert.equal(detectFormat('{"type":"signet-export","version":1}\n{"type":"account"}'), 'signet');
  assert.equal(detectFormat('{\n  "id" : "acme",\n  "realm" : "acme",'), 'keycloak');
  assert.equal(detectFormat('\uFEFF  [ {"email": "a@example.com"} ]'), 'auth0');
  assert.equal(detectFormat('email,phone,name\n'), 'csv');
  assert.equal(detectFormat('{"user_id":"auth0|1","email":"a@example.com"}\n{"user_id":"auth0|2"}'), 'auth0', "Auth0's export job: one user a line");
});

test("Auth0's export job (JSON Lines) is read line by line, each user with its line", async () => {
  const text = '{"user_id":"auth0|1","email":"one@example.com","email_verified":true}\n\n{"user_id":"auth0|2","email":"two@example.com","blocked":true}\nnot json\n';
  const items = [];
  for await (const item of readAuth0(chunksOf(text, 5))) items.push(item);
  assert.deepEqual(items.map((i) => [i.line, i.kind]), [[1, 'account'], [3, 'account'], [4, 'error']]);
  assert.equal((items[1] as { person: { disabled?: boolean } }).person.disabled, true);
});
