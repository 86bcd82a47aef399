// GET /admin/v1/openapi.json: "an OpenAPI document served from the schemas". It must be a usable
// OpenAPI 3 document: every contract path in it, every operation with its answers, every reference
// resolving, every schema a valid JSON Schema that means what the API does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildAdminApp } from '../../src/admin/app.ts';
import { createFsObjectStore } from '../../src/storage/fs.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { manualClock } from '../../src/config/clock.ts';
import { createLogger } from '../../src/web/logging.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import type { OpenApiDocument } from './admin-fixture.ts';

/** The contract's admin calls (spec/operator-contract.md, "Admin API"). */
const CONTRACT = [
  'GET /admin/v1/accounts',
  'GET /admin/v1/accounts/{sub}',
  'PATCH /admin/v1/accounts/{sub}',
  'DELETE /admin/v1/accounts/{sub}',
  'POST /admin/v1/accounts/{sub}/unlock',
  'GET /admin/v1/accounts/{sub}/sessions',
  'DELETE /admin/v1/accounts/{sub}/sessions',
  'GET /admin/v1/clients',
  'POST /admin/v1/clients',
  'GET /admin/v1/clients/{client_id}',
  'PATCH /admin/v1/clients/{client_id}',
  'DELETE /admin/v1/clients/{client_id}',
  'GET /admin/v1/audit-events',
  'POST /admin/v1/import',
  'GET /admin/v1/export',
];

type Operation = {
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: object }>;
  requestBody?: { content: Record<string, { schema: object }> };
  responses: Record<string, { description?: unknown; content?: Record<string, { schema: object }> }>;
};

describe('the OpenAPI document', () => {
  let doc: OpenApiDocument & { paths: Record<string, Record<string, Operation>> };
  let raw: string;
  let contentType: string;
  let dispose: () => Promise<void>;
  before(async () => {
    const database = await sqliteDatabase();
    const app = await buildAdminApp({ db: database.db, clock: manualClock(), keys: deriveKeys('x'.repeat(40)), objects: createFsObjectStore(mkdtempSync(path.join(tmpdir(), 'signet-openapi-'))), logger: createLogger('silent'), trustProxy: false });
    const res = await app.inject({ method: 'GET', url: '/admin/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    raw = res.body;
    contentType = String(res.headers['content-type']);
    doc = JSON.parse(raw);
    dispose = async () => {
      await app.close();
      await database.dispose();
    };
  });
  after(() => dispose());

  test('parses as OpenAPI 3: JSON, an openapi version 3.x.y, info with title and version, paths', () => {
    assert.match(contentType, /^application\/json/);
    assert.match(doc.openapi, /^3\.\d+\.\d+$/);
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
    assert.equal(typeof doc.paths, 'object');
    for (const path of Object.keys(doc.paths)) assert.match(path, /^\/admin\/v1\//, 'paths are absolute, under /admin/v1');
  });

  test('every contract path is in it, with its method', () => {
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    assert.deepEqual(CONTRACT.filter((op) => !documented.has(op)), []);
    assert.equal(doc.paths['/admin/v1/openapi.json'], undefined, 'the document does not describe itself');
  });

  test('each operation has responses: a described 2xx answer and the 401 of a missing key; path parameters are declared and required', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        assert.ok(statuses.some((s) => /^2\d\d$/.test(s)), `${method} ${path} has a 2xx answer`);
        assert.ok(statuses.includes('401'), `${method} ${path} documents 401`);
        for (const [status, response] of Object.entries(op.responses)) assert.equal(typeof response.description, 'string', `${method} ${path} ${status} has a description (OpenAPI 3 requires it)`);
        for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
          const param = op.parameters?.find((p) => p.in === 'path' && p.name === name);
          assert.ok(param?.required === true && param.schema, `${method} ${path} declares the path parameter ${name} as required`);
        }
        for (const p of op.parameters ?? []) assert.ok(['path', 'query', 'header', 'cookie'].includes(p.in), `${method} ${path}: parameter ${p.name} in ${p.in}`);
      }
    }
  });

  test('the operator key is declared: an http bearer scheme, required by every operation', () => {
    const scheme = doc.components.securitySchemes.operatorKey;
    assert.equal(scheme?.type, 'http');
    assert.equal(scheme?.scheme, 'bearer');
    assert.deepEqual(doc.security, [{ operatorKey: [] }]);
  });

  test('every $ref resolves inside the document, and every schema compiles as JSON Schema', () => {
    const refs: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) {
          if (key === '$ref' && typeof inner === 'string') refs.push(inner);
          else walk(inner);
        }
      }
    };
    walk(doc);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\/\w+$/, ref);
      assert.ok(doc.components.schemas[ref.split('/').pop()!], `${ref} resolves`);
    }
    const ajv = new Ajv({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema(doc as object, 'openapi');
    let compiled = 0;
    for (const name of Object.keys(doc.components.schemas)) {
      ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
      compiled++;
    }
    const pointer = (...parts: string[]) => `openapi#/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses)) {
          for (const type of Object.keys(response.content ?? {})) {
            ajv.compile({ $ref: pointer('paths', path, method, 'responses', status, 'content', type, 'schema') });
            compiled++;
          }
        }
        for (const type of Object.keys(op.requestBody?.content ?? {})) {
          ajv.compile({ $ref: pointer('paths', path, method, 'requestBody', 'content', type, 'schema') });
          compiled++;
        }
        op.parameters?.forEach((_p, i) => {
          ajv.compile({ $ref: pointer('paths', path, method, 'parameters', String(i), 'schema') });
          compiled++;
        });
      }
    }
    assert.ok(compiled > 30, `${compiled} schemas compiled`);
  });

  test('the schemas mean what the API does: an account needs the contract fields, a null e-mail is allowed, a number as sub is not', () => {
    const ajv = new Ajv({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema(doc as object, 'openapi');
    const account = ajv.compile({ $ref: 'openapi#/components/schemas/Account' });
    const valid = { sub: 'x', email: null, email_verified: false, phone_number: '+4915112345678', phone_number_verified: true, name: null, picture: null, disabled: false, created_at: '2026-01-01T00:00:00.000Z' };
    assert.ok(account(valid), ajv.errorsText(account.errors));
    assert.equal(account({ ...valid, sub: 1 }), false);
    const { disabled: _missing, ...withoutDisabled } = valid;
    assert.equal(account(withoutDisabled), false, 'disabled is required');
    const event = ajv.compile({ $ref: 'openapi#/components/schemas/AuditEvent' });
    assert.equal(event({ id: '1', type: 'signin.failed', at: '2026-01-01T00:00:00.000Z', sub: null, client_id: null, ip: '::1', outcome: 'maybe' }), false, 'outcome is one of success, failure, refused');
  });
});
