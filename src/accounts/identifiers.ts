// E-mail and phone normalisation: one account per address and per number.
import { createRequire } from 'node:module';

/**
 * libphonenumber-js (~110 modules and its metadata, ~1.7 MB of heap) is loaded at the first phone
 * number, not by every process that imports accounts: a server that only answers tokens never needs it
 * (issue 44, memory). Its CommonJS build, so it loads synchronously.
 */
function phoneNumbers(): typeof import('libphonenumber-js') {
  return (loaded ??= createRequire(import.meta.url)('libphonenumber-js') as typeof import('libphonenumber-js'));
}
let loaded: typeof import('libphonenumber-js') | undefined;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Lower-cased, trimmed e-mail address, or undefined when it is not one. */
export function normalizeEmail(value: string): string | undefined {
  const email = value.trim().toLowerCase();
  return EMAIL.test(email) && email.length <= 320 ? email : undefined;
}

/** E.164 form (`+4915112345678`), or undefined when the number is not valid. Numbers must carry a country code. */
export function normalizePhone(value: string): string | undefined {
  const phone = phoneNumbers().parsePhoneNumberFromString(value.trim());
  return phone && phone.isValid() ? phone.number : undefined;
}

/** Sign-in accepts either: something with an @ is an e-mail, anything else a phone number. */
export function parseLoginIdentifier(value: string): { email: string } | { phone: string } | undefined {
  if (value.includes('@')) {
    const email = normalizeEmail(value);
    return email ? { email } : undefined;
  }
  const phone = normalizePhone(value);
  return phone ? { phone } : undefined;
}
