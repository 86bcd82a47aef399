// Scores of the public benchmark: every page of every engine scored with the same functions
// (bench/docparse/metrics.ts, opendataloader-bench's NID / TEDS / MHS), means per document class,
// per set and overall, and the table printed and committed.
import { headingScores, readingOrderScores, tableScores } from './metrics.ts';
import type { EngineName } from './public-engines.ts';
import type { PublicDocument } from './public-corpus.ts';

export type Figures = { nid?: number; teds?: number; mhs?: number };

export type PageResult = { set: string; id: string; page: number; class: PublicDocument['class']; tex: boolean; scope: PublicDocument['scope']; scores: Partial<Record<EngineName, Figures>> };

/**
 * One page scored: a whole-page truth gives NID, and TEDS or MHS where it has tables or headings; a
 * tables-only truth gives TEDS only. pdftotext writes plain text, so only its NID means anything.
 */
export function scorePage(truth: string, predicted: string, scope: PublicDocument['scope'], engine: EngineName): Figures {
  const figures: Figures = {};
  if (scope === 'page') {
    const order = readingOrderScores(truth, predicted);
    if (order) figures.nid = order.nid;
  }
  if (engine === 'pdftotext') return figures;
  const tables = tableScores(truth, predicted);
  if (tables) figures.teds = tables.teds;
  if (scope === 'page') {
    const headings = headingScores(truth, predicted);
    if (headings) figures.mhs = headings.mhs;
  }
  return figures;
}

export type Summary = { pages: number; figures: Partial<Record<EngineName, { nid?: number; teds?: number; mhs?: number; nidPages: number; tedsPages: number; mhsPages: number }>> };

const mean = (values: number[]) => (values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0) / values.length);

export function summarise(pages: PageResult[], engines: EngineName[]): Summary {
  const summary: Summary = { pages: pages.length, figures: {} };
  for (const engine of engines) {
    const of = (key: keyof Figures) => pages.map((p) => p.scores[engine]?.[key]).filter((v): v is number => v !== undefined);
    const nid = of('nid');
    const teds = of('teds');
    const mhs = of('mhs');
    summary.figures[engine] = { nid: mean(nid), teds: mean(teds), mhs: mean(mhs), nidPages: nid.length, tedsPages: teds.length, mhsPages: mhs.length };
  }
  return summary;
}

const fixed = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(2));

/** Groups of pages for the rows: each class, each set, TeX or not, all. */
export function groups(pages: PageResult[]): Array<{ label: string; pages: PageResult[] }> {
  const by = (key: (p: PageResult) => string) => [...new Set(pages.map(key))].sort().map((value) => ({ value, pages: pages.filter((p) => key(p) === value) }));
  return [
    ...by((p) => p.class).map((g) => ({ label: `class: ${g.value}`, pages: g.pages })),
    ...by((p) => p.set).map((g) => ({ label: `set: ${g.value}`, pages: g.pages })),
    { label: 'not typeset by TeX', pages: pages.filter((p) => !p.tex) },
    { label: '**text-layer pages** (scans left out)', pages: pages.filter((p) => p.class !== 'scan') },
    { label: '**all pages**', pages },
  ];
}

/** The side-by-side table: NID, TEDS, MHS for Signet and opendataloader (pdftotext: NID), page counts behind each mean. */
export function scoreTable(pages: PageResult[], engines: EngineName[]): string {
  const has = (e: EngineName) => engines.includes(e);
  const header = ['rows', 'pages', 'NID Signet', ...(has('opendataloader') ? ['NID opendataloader'] : []), ...(has('pdftotext') ? ['NID pdftotext'] : []), 'TEDS Signet', ...(has('opendataloader') ? ['TEDS opendataloader'] : []), 'MHS Signet', ...(has('opendataloader') ? ['MHS opendataloader'] : []), 'pages with NID / TEDS / MHS'];
  const lines = [`| ${header.join(' | ')} |`, `|---|${header.slice(1).map(() => '---:').join('|')}|`];
  for (const group of groups(pages)) {
    const s = summarise(group.pages, engines);
    const f = (e: EngineName, k: 'nid' | 'teds' | 'mhs') => fixed(s.figures[e]?.[k]);
    const sig = s.figures.signet;
    const cells = [group.label, String(s.pages), f('signet', 'nid'), ...(has('opendataloader') ? [f('opendataloader', 'nid')] : []), ...(has('pdftotext') ? [f('pdftotext', 'nid')] : []), f('signet', 'teds'), ...(has('opendataloader') ? [f('opendataloader', 'teds')] : []), f('signet', 'mhs'), ...(has('opendataloader') ? [f('opendataloader', 'mhs')] : []), `${sig?.nidPages ?? 0} / ${sig?.tedsPages ?? 0} / ${sig?.mhsPages ?? 0}`];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * Issue 41's two truths side by side: for the files with a second truth, each measure against this
 * corpus's truth ("own") and against the other project's ("docling"), per class and for them all.
 */
export function twoTruthTable(own: PageResult[], second: PageResult[], engines: EngineName[]): string {
  const files = new Set(second.map((p) => `${p.set}/${p.id}`));
  const ownPages = own.filter((p) => files.has(`${p.set}/${p.id}`));
  const shown = engines.filter((e) => e !== 'pdftotext');
  const keys = ['nid', 'teds', 'mhs'] as const;
  const name = (e: EngineName) => (e === 'signet' ? 'Signet' : e);
  const header = ['rows', 'files', ...keys.flatMap((k) => shown.flatMap((e) => [`${k.toUpperCase()} ${name(e)} own`, `${k.toUpperCase()} ${name(e)} docling`])), 'pages with NID / TEDS / MHS: own; docling'];
  const lines = [`| ${header.join(' | ')} |`, `|---|${header.slice(1).map(() => '---:').join('|')}|`];
  const classes = [...new Set(second.map((p) => p.class))].sort();
  const rows = [...classes.map((c) => ({ label: `class: ${c}`, own: ownPages.filter((p) => p.class === c), second: second.filter((p) => p.class === c) })), { label: '**all files with both truths**', own: ownPages, second }];
  for (const row of rows) {
    const a = summarise(row.own, shown);
    const b = summarise(row.second, shown);
    const count = (s: Summary) => `${s.figures.signet?.nidPages ?? 0} / ${s.figures.signet?.tedsPages ?? 0} / ${s.figures.signet?.mhsPages ?? 0}`;
    const cells = [row.label, String(new Set(row.second.map((p) => p.id)).size), ...keys.flatMap((k) => shown.flatMap((e) => [fixed(a.figures[e]?.[k]), fixed(b.figures[e]?.[k])])), `${count(a)}; ${count(b)}`];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export type Timing = { batch: string; files: number; pages: number; seconds: Partial<Record<EngineName, number>>; cpuSeconds: Partial<Record<EngineName, number>>; peakTreeMb?: Partial<Record<EngineName, number>>; peakProcessMb?: Partial<Record<EngineName, number>> };

/** The batches added up: the whole corpus, for each program that ran every batch. */
function wholeCorpus(timings: Timing[], engines: EngineName[]): Timing {
  const total: Timing = { batch: '**whole corpus**', files: 0, pages: 0, seconds: {}, cpuSeconds: {} };
  for (const t of timings) {
    total.files += t.files;
    total.pages += t.pages;
  }
  for (const e of engines) {
    if (timings.every((t) => t.seconds[e] !== undefined)) total.seconds[e] = timings.reduce((n, t) => n + (t.seconds[e] ?? 0), 0);
    if (timings.every((t) => t.cpuSeconds[e] !== undefined)) total.cpuSeconds[e] = timings.reduce((n, t) => n + (t.cpuSeconds[e] ?? 0), 0);
  }
  return total;
}

export function timingTable(batches: Timing[], engines: EngineName[]): string {
  const timings = batches.length > 1 ? [...batches, wholeCorpus(batches, engines)] : batches;
  const header = ['batch', 'files', 'pages', ...engines.map((e) => `${e} wall s (pages/s)`), ...engines.map((e) => `${e} CPU s (pages per CPU-s)`), ...engines.filter((e) => e !== 'pdftotext').map((e) => `${e} peak RSS MB: all processes / largest one`)];
  const lines = [`| ${header.join(' | ')} |`, `|---|${header.slice(1).map(() => '---:').join('|')}|`];
  for (const t of timings) {
    const cell = (e: EngineName) => {
      const s = t.seconds[e];
      return s === undefined ? '–' : `${s.toFixed(1)} (${(t.pages / s).toFixed(1)})`;
    };
    const cpu = (e: EngineName) => {
      const c = t.cpuSeconds[e];
      return c === undefined ? '–' : `${c.toFixed(1)} (${c > 0 ? (t.pages / c).toFixed(1) : '–'})`;
    };
    const rss = (e: EngineName) => (t.peakTreeMb?.[e] === undefined ? '–' : `${t.peakTreeMb[e]} / ${t.peakProcessMb?.[e] ?? '–'}`);
    lines.push(`| ${t.batch} | ${t.files} | ${t.pages} | ${engines.map(cell).join(' | ')} | ${engines.map(cpu).join(' | ')} | ${engines.filter((e) => e !== 'pdftotext').map(rss).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The pages where Signet scores lowest on a figure, with opendataloader's score beside. */
export function worstPages(pages: PageResult[], key: keyof Figures, count = 12, truth?: string): string {
  const scored = pages.filter((p) => p.scores.signet?.[key] !== undefined).sort((a, b) => (a.scores.signet?.[key] ?? 0) - (b.scores.signet?.[key] ?? 0));
  const lines = [`| ${key.toUpperCase()}: worst pages for Signet${truth ? ` on ${truth}` : ''} | class | Signet | opendataloader |`, '|---|---|---:|---:|'];
  for (const p of scored.slice(0, count)) lines.push(`| ${p.set}/${p.id} p. ${p.page} | ${p.class} | ${fixed(p.scores.signet?.[key])} | ${fixed(p.scores.opendataloader?.[key])} |`);
  return lines.join('\n');
}
