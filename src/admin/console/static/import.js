// The console's import page: sends the file with its CSRF token and shows the progress the server
// reports as it reads (one JSON line per batch: records read and bytes of the file), then the summary.
const form = document.getElementById('import-form');
const fields = document.getElementById('import-fields');
if (form && fields) {
  fields.disabled = false;
  const status = document.getElementById('import-status');
  const bar = document.getElementById('import-progress');
  const reading = document.getElementById('import-reading');
  const template = form.getAttribute('data-reading') || '';
  const words = (records, percent) => template.replace('{records}', String(records)).replace('{percent}', String(percent));
  const show = (id, value) => { document.getElementById(id).textContent = String(value); };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = document.getElementById('import-file').files[0];
    if (!file) return;
    const data = new FormData();
    data.append('format', document.getElementById('import-format').value);
    data.append('dry_run', document.getElementById('import-dry-run').checked ? 'true' : 'false');
    data.append('file', file);
    const token = form.querySelector('input[name="_csrf"]').value;
    const dryRun = document.getElementById('import-dry-run').checked;
    fields.disabled = true;
    status.hidden = false;
    document.getElementById('import-result').hidden = true;
    bar.value = 0;
    let seen = 0;
    let uploaded = 0;
    let processed = 0;
    const paint = (records) => {
      const percent = Math.min(100, Math.floor((100 * Math.max(processed, uploaded * 0.98)) / Math.max(1, file.size)));
      bar.value = percent;
      if (records !== undefined) reading.textContent = words(records, percent);
    };
    const request = new XMLHttpRequest();
    request.open('POST', '/admin/import');
    request.setRequestHeader('x-csrf-token', token);
    request.setRequestHeader('accept', 'application/x-ndjson');
    request.upload.addEventListener('progress', (e) => { uploaded = e.loaded; paint(); });
    const lines = () => {
      const text = request.responseText;
      const complete = text.lastIndexOf('\n');
      const fresh = text.slice(seen, complete + 1);
      seen = complete + 1;
      for (const line of fresh.split('\n').filter(Boolean)) {
        const message = JSON.parse(line);
        if (message.progress) { processed = message.progress.bytes; paint(message.progress.records); }
        if (message.summary) finish(message.summary);
        if (message.error) fail(message.error);
      }
    };
    const finish = (summary) => {
      bar.value = 100;
      const done = document.getElementById('import-done');
      done.textContent = dryRun ? done.getAttribute('data-dry-done') : done.getAttribute('data-done');
      show('import-created', summary.created);
      show('import-updated', summary.updated);
      show('import-skipped', summary.skipped);
      show('import-refused', summary.errors.length);
      const body = document.getElementById('import-errors');
      body.replaceChildren();
      for (const error of summary.errors) {
        const row = document.createElement('tr');
        for (const value of [error.line, error.reason]) { const cell = document.createElement('td'); cell.textContent = String(value); row.append(cell); }
        body.append(row);
      }
      document.getElementById('import-errors-wrap').hidden = summary.errors.length === 0;
      document.getElementById('import-result').hidden = false;
      fields.disabled = false;
    };
    const fail = (message) => {
      const done = document.getElementById('import-done');
      done.textContent = done.getAttribute('data-failed') + ' ' + message;
      document.getElementById('import-result').hidden = false;
      fields.disabled = false;
    };
    request.addEventListener('progress', lines);
    request.addEventListener('load', () => { lines(); if (request.status >= 400 && seen === 0) fail(request.statusText || String(request.status)); });
    request.addEventListener('error', () => fail('the connection was lost'));
    request.send(data);
  });
}
