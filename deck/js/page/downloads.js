// Saving a file and copying text from the page: the two ways a student takes
// something home. No network is involved: the file is made in the page.

/** Downloads `text` as a file called `name` (a Blob URL and an <a download>). */
export function downloadText(name, text, type = "text/plain") {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.appendChild(link);
  link.click();
  link.remove();
  // The download has started by the next task; the URL is no longer needed.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Downloads a cell's code as `<cell id>.py`, exactly as it is in its editor. */
export function downloadPython(cellId, source) {
  downloadText(`${cellId}.py`, source, "text/x-python");
}

/**
 * Copies `text` to the clipboard; resolves true when it did. The Clipboard API
 * needs a secure context (https or localhost): elsewhere a hidden text area
 * and the browser's copy command do it.
 */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      /* permission refused: try the old way */
    }
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}
