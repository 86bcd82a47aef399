// A page's AcroForm fields as PDFium's form API reads them (ISO 32000-1 §12.7): each widget
// annotation's field name, type, value, tooltip (/TU) and rectangle. The value a person typed or
// chose lives in the field, not in the page's text, so without this a filled form loses its answers.
// Labels are found on the page by layout/form-fields.ts.
import type { FormField, FormFieldType } from '../layout/geometry.ts';
import { readUtf16, Scratch, type Pdfium } from './pdfium.ts';

/** fpdf_annot.h: FPDF_ANNOT_WIDGET. */
const WIDGET = 20;
/** fpdf_formfill.h: FPDF_FORMFIELD_* (1 push button … 7 signature). */
const TYPES: Record<number, FormFieldType> = { 1: 'button', 2: 'checkbox', 3: 'radio', 4: 'combobox', 5: 'listbox', 6: 'text', 7: 'signature' };

/** The document's form environment, opened on the first page that has a widget and closed with the document. */
export type FormHandle = { handle: number; close: () => void };

export function openForm(pdfium: Pdfium, document: number): FormHandle | undefined {
  const info = pdfium.PDFiumExt_OpenFormFillInfo();
  if (info === 0) return undefined;
  const handle = pdfium.PDFiumExt_InitFormFillEnvironment(document, info);
  if (handle === 0) {
    pdfium.PDFiumExt_CloseFormFillInfo(info);
    return undefined;
  }
  return {
    handle,
    close: () => {
      pdfium.PDFiumExt_ExitFormFillEnvironment(handle);
      pdfium.PDFiumExt_CloseFormFillInfo(info);
    },
  };
}

/** Whether the page has any widget annotation (most pages have none: no form environment is opened for them). */
export function hasWidgets(pdfium: Pdfium, page: number): boolean {
  const count = pdfium.FPDFPage_GetAnnotCount(page);
  for (let i = 0; i < count; i += 1) {
    const annot = pdfium.FPDFPage_GetAnnot(page, i);
    if (annot === 0) continue;
    const widget = pdfium.FPDFAnnot_GetSubtype(annot) === WIDGET;
    pdfium.FPDFPage_CloseAnnot(annot);
    if (widget) return true;
  }
  return false;
}

/** The page's widgets in annotation order, boxes relative to `origin` (the crop box's corner), bottom-left origin. */
export function readFormFields(pdfium: Pdfium, form: FormHandle, page: number, origin: { x: number; y: number }): FormField[] {
  const fields: FormField[] = [];
  const scratch = new Scratch(pdfium, 16);
  // The form fill environment knows a page's widgets (their on states among them) once told the page is loaded.
  pdfium.FORM_OnAfterLoadPage(page, form.handle);
  try {
    const count = pdfium.FPDFPage_GetAnnotCount(page);
    for (let i = 0; i < count; i += 1) {
      const annot = pdfium.FPDFPage_GetAnnot(page, i);
      if (annot === 0) continue;
      try {
        if (pdfium.FPDFAnnot_GetSubtype(annot) !== WIDGET) continue;
        const type = TYPES[pdfium.FPDFAnnot_GetFormFieldType(form.handle, annot)];
        if (!type || !pdfium.FPDFAnnot_GetRect(annot, scratch.ptr)) continue;
        const text = (read: (buffer: number, bytes: number) => number) => readUtf16(pdfium, read).replace(/\s+/g, ' ').trim();
        const name = text((b, n) => pdfium.FPDFAnnot_GetFormFieldName(form.handle, annot, b, n));
        const value = text((b, n) => pdfium.FPDFAnnot_GetFormFieldValue(form.handle, annot, b, n));
        const tooltip = text((b, n) => pdfium.FPDFAnnot_GetFormFieldAlternateName(form.handle, annot, b, n));
        // FS_RECTF: left, top, right, bottom.
        const [l, t, r, b] = [scratch.f32(0), scratch.f32(1), scratch.f32(2), scratch.f32(3)];
        const field: FormField = { name, type, value, bbox: { l: Math.min(l, r) - origin.x, r: Math.max(l, r) - origin.x, t: Math.max(t, b) - origin.y, b: Math.min(t, b) - origin.y } };
        if (tooltip !== '') field.tooltip = tooltip;
        // A check box or radio button is on when its field's value is this widget's own state name (its export value).
        if (type === 'checkbox' || type === 'radio') field.exportValue = text((b, n) => pdfium.FPDFAnnot_GetFormFieldExportValue(form.handle, annot, b, n));
        if (type === 'checkbox' || type === 'radio') field.checked = pdfium.FPDFAnnot_IsChecked(form.handle, annot);
        fields.push(field);
      } finally {
        pdfium.FPDFPage_CloseAnnot(annot);
      }
    }
  } finally {
    pdfium.FORM_OnBeforeClosePage(page, form.handle);
    scratch.free();
  }
  return fields;
}
