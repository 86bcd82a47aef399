// A CSV file with a header line, one person a line:
//   email,phone,name,email_verified,password_hash
// (any order; `phone_verified`, `picture` and `sub` may be added; every column but email or phone may be
// left out). password_hash takes any form Signet reads (bcrypt, argon2, scrypt, PBKDF2 as PHC, passlib
// or Django strings); an empty one makes an account that sets its password with "Forgot password".
import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import type { ImportedPerson } from '../accounts/account-import.ts';
import { FormatError, type ImportItem, type TextChunks } from './records.ts';

const COLUMNS: Record<string, keyof ImportedPerson> = {
  sub: 'sub',
  email: 'email',
  phone: 'phone',
  phone_number: 'phone',
  name: 'name',
  picture: 'picture',
  email_verified: 'emailVerified',
  phone_verified: 'phoneVerified',
  phone_number_verified: 'phoneVerified',
  password_hash: 'passwordHash',
};

function flag(value: string, column: string): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (v === '') return undefined;
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  throw new FormatError(`${column} must be true or false (or 1/0, yes/no), not ${JSON.stringify(value.slice(0, 20))}`);
}

function csvPerson(header: Array<keyof ImportedPerson>, names: string[], cells: string[]): ImportedPerson {
  if (cells.length !== header.length) throw new FormatError(`the line has ${cells.length} fields and the header ${header.length}${cells.length > header.length ? " (a value with commas, such as a $pbkdf2-…$i=…,l=…$ hash, goes in double quotes)" : ""}`);
  const person: Record<string, string | boolean | undefined> = {};
  header.forEach((field, i) => {
    const cell = cells[i]!;
    if (field === 'emailVerified' || field === 'phoneVerified') person[field] = flag(cell, names[i]!);
    else person[field] = cell.trim() === '' ? undefined : cell.trim();
  });
  return person as ImportedPerson;
}

export async function* readCsv(chunks: TextChunks): AsyncGenerator<ImportItem> {
  const parser = Readable.from(chunks).pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }));
  let header: Array<keyof ImportedPerson> | undefined;
  let names: string[] = [];
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (header === undefined) {
        names = record.map((name) => name.trim().toLowerCase());
        const unknown = names.filter((name) => !(name in COLUMNS));
        if (unknown.length > 0 || !(names.includes('email') || names.includes('phone') || names.includes('phone_number'))) {
          yield { line: info.lines, kind: 'error', reason: `the header must name the columns email, phone, name, email_verified, password_hash (and may add phone_verified, picture, sub)${unknown.length ? `; ${unknown.map((u) => JSON.stringify(u.slice(0, 40))).join(', ')} is not one` : ''}; nothing was imported` };
          return;
        }
        header = names.map((name) => COLUMNS[name]!);
        continue;
      }
      try {
        yield { line: info.lines, kind: 'account', person: csvPerson(header, names, record) };
      } catch (error) {
        if (!(error instanceof FormatError)) throw error;
        yield { line: info.lines, kind: 'error', reason: error.message };
      }
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const line = (error as CsvError & { lines?: number }).lines ?? 0;
    yield { line, kind: 'error', reason: `the CSV cannot be read from here on: ${error.message.replace(/^Invalid [^:]*: /, '').slice(0, 160)}` };
  }
}
