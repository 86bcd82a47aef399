// The bundled Noto Sans SC font files. Both engines need a font that covers Simplified Chinese:
// the test PDFs embed it, and the translation engine writes translated PDFs with it. Resolved
// through the package itself, so the path holds wherever npm placed node_modules.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const FONT_PACKAGE = '@expo-google-fonts/noto-sans-sc';
const REGULAR = '400Regular/NotoSansSC_400Regular.ttf';
const BOLD = '700Bold/NotoSansSC_700Bold.ttf';

export type FontPaths = { regular: string; bold: string };

let cached: FontPaths | undefined;

/** Absolute paths of Noto Sans SC Regular and Bold; throws a message saying how to restore them. */
export function fontPaths(): FontPaths {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  let root: string;
  try {
    root = path.dirname(require.resolve(`${FONT_PACKAGE}/package.json`));
  } catch {
    throw new Error(`The font package ${FONT_PACKAGE} is not installed; run \`npm ci\` to install Signet's dependencies.`);
  }
  const found = { regular: path.join(root, REGULAR), bold: path.join(root, BOLD) };
  for (const file of [found.regular, found.bold]) {
    if (!existsSync(file)) {
      throw new Error(`The font file ${file} is missing from ${FONT_PACKAGE}; reinstall it with \`npm ci\`.`);
    }
  }
  cached = found;
  return found;
}
