// The window's colours: the saved theme (light, dark, or the system's), applied as
// `data-theme` on the root element, which app.css keys its colours on. "System" follows the
// system's preference as it changes. The last theme applied is kept in localStorage, so the
// next start paints in it before the settings arrive.
import type { Theme } from '../gen/Theme';

const KEY = 'mc-theme';
const dark = () => typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;

/** The colours a theme means now. */
export function resolveTheme(theme: Theme, systemDark: boolean): 'light' | 'dark' {
  return theme === 'system' ? (systemDark ? 'dark' : 'light') : theme;
}

let current: Theme = 'system';
let listening = false;

/** Applies `theme`; with `keep`, it is also the theme the next start paints in first (a theme
 *  only tried in the Settings view is not). */
export function applyTheme(theme: Theme, keep = true): void {
  current = theme;
  document.documentElement.dataset.theme = resolveTheme(theme, dark());
  if (!keep) return;
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // storage refused (a private window): the theme still applies now
  }
  if (!listening && typeof matchMedia === 'function') {
    listening = true;
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => applyTheme(current));
  }
}

/** The theme last applied on this machine (before the settings are known). */
export function storedTheme(): Theme {
  try {
    const t = localStorage.getItem(KEY);
    return t === 'light' || t === 'dark' ? t : 'system';
  } catch {
    return 'system';
  }
}
