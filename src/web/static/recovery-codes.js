// The recovery-codes page's Copy action (no third-party script): copies the codes, one a line.
for (const button of document.querySelectorAll('[data-copy-codes]')) {
  if (!navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const list = document.getElementById(button.dataset.copyCodes);
    const codes = [...list.querySelectorAll('[data-recovery-code]')].map((c) => c.dataset.recoveryCode).join('\n');
    const status = button.parentElement.querySelector('[data-copy-status]');
    try {
      await navigator.clipboard.writeText(codes + '\n');
      if (status) status.textContent = button.dataset.copied;
    } catch {
      if (status) status.textContent = '';
    }
  });
}
