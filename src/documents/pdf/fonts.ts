// A font's style as layout uses it — bold, italic, monospaced, mathematics — from its PostScript
// name (Helvetica-BoldOblique, ABCDEF+CMTT10, NotoSansSC-Black), its descriptor's flags and weight.

export type FontStyle = { bold: boolean; italic: boolean; mono: boolean; math: boolean; /** The descriptor says FixedPitch — true of most CJK fonts too, so it makes Latin text mono, never CJK text. */ fixedPitch: boolean;
  /** A dingbat font (ZapfDingbats, Wingdings, Webdings, Allumi's DingbatsTwo …): its codes draw pictures, not the letters they read as. */
  dingbats: boolean;
};

/** Where a dingbat font's codes go (pdf/page-text.ts): U+E000 + the code, private use, a picture no reader names. */
export const PICTURE_CODES = 0xe000;
/** Whether a character is such a picture code: it has no glyph to set again from its text, only the source's drawing. */
export const isPictureCode = (cp: number) => cp > PICTURE_CODES + 0x20 && cp <= PICTURE_CODES + 0xff;

/** PDF 32000 §9.8.2, the font descriptor's Flags: bit 1 FixedPitch. */
const FIXED_PITCH = 1 << 0;

/**
 * Adobe's short weight and slant at the end of a family name, joined without a hyphen
 * (AdobeCorpID-MyriadBd, MyriadBdIt, MyriadRgIt, MinionSbIt): "Bd" bold, "It" italic.
 */
const CAMEL_BOLD = /(?<=[a-z])(?:Bd|Bold|Blk|Hv|Sb|Smbd)(?:Cn|Cond|SemiCn|Ext)?(?:It)?$/;
const CAMEL_ITALIC = /(?<=[a-z])(?:Bd|Rg|Lt|Sb|Md|Blk|Hv|Smbd|Cn)?It$/;
/** Fonts of pictures: their codes read as letters ("y" for a bullet) where the font has no better ToUnicode map. */
const DINGBATS = /dingbat|wingding|webding/i;

/**
 * Weight and slant come from the name, as they did with pdf.js: the descriptor's Italic flag is also
 * set on mathematics italics (CMMI) and its weight is often missing, so using them moved headings
 * and emphasis on the corpus. `weight` is taken for a font whose name says nothing (≥ 700: bold).
 */
export function fontStyle(name: string, flags: number, weight: number): FontStyle {
  const bare = name.replace(/^[A-Z]{6}\+/, '');
  return {
    // TeX's Computer Modern and EC/cm-super fonts (CMBX10, SFBX1000, SFTI1000, SFSL…) and URW's
    // (NimbusRomNo9L-Medi, -MediItal, -ReguItal) name their weight and slant in short forms.
    // Libertine and Biolinum (LaTeX's libertine package: LinLibertineTB, LinBiolinumTB, LinLibertineTI) too.
    bold: /bold|black|heavy|semibold|demibold|CMBX|CMB\d|SFBX|SFB\d|-Medi\b|-MediItal|\bBd\b|-Bd/i.test(name) || CAMEL_BOLD.test(bare) || /^Lin(?:Libertine|Biolinum)[TO]?B/.test(bare) || (bare === '' && weight >= 700),
    italic: /italic|oblique|CMTI|CMSL|SFTI|SFSL|SFIT|Ital\b|-It\b|-BdIt|-MediItal/i.test(name) || CAMEL_ITALIC.test(bare) || /^Lin(?:Libertine|Biolinum)[TO]?B?I/.test(bare),
    math: /CMMI|CMSY|CMEX|CMBSY|MSAM|MSBM|LMMath|STIX|XITS|CambriaMath|Cambria-Math|TeXGyre\w*Math|Asana|rsfs|EUFM|EUSM|Symbol\b/i.test(name),
    mono: /courier|mono|typewriter|consol|menlo|CMTT|SFTT|LMMono|inconsolata/i.test(name),
    fixedPitch: (flags & FIXED_PITCH) !== 0,
    dingbats: DINGBATS.test(bare),
  };
}
