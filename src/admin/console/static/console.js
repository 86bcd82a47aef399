// The console's one script: Copy buttons for a secret shown once (data-copy names the element).
for (const button of document.querySelectorAll('button[data-copy]')) {
  const target = document.getElementById(button.getAttribute('data-copy'));
  if (!target || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(target.textContent.trim()).then(() => { button.setAttribute('aria-live', 'polite'); button.textContent = '✓ ' + button.textContent.replace(/^✓ /, ''); });
  });
}
