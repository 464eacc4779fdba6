import { mount, unmount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { ipc } from './lib/ipc';
import { applyTheme, storedTheme } from './lib/theme';
import TokenNeeded from './views/TokenNeeded.svelte';

// The theme last used, before the settings arrive: no flash of the other colours.
applyTheme(storedTheme());

const target = document.getElementById('app')!;
// A page served by `mctl serve` without its token asks for the URL with it, and nothing else;
// so does one whose token the server refuses later.
if (ipc.hasToken()) {
  const app = mount(App, { target });
  const off = ipc.onUnauthorized(() => {
    off();
    void unmount(app);
    mount(TokenNeeded, { target, props: { refused: true } });
  });
} else {
  mount(TokenNeeded, { target });
}

// The URL with the token opened again in this tab (pasted over a page that asked for it) only
// changes the fragment, which loads nothing: start again from it.
window.addEventListener('hashchange', () => {
  if (new URLSearchParams(location.hash.slice(1)).get('token')) location.reload();
});
