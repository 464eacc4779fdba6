import { mount } from 'svelte';
import App from './App.svelte';
import './app.css';
import { applyTheme, storedTheme } from './lib/theme';

// The theme last used, before the settings arrive: no flash of the other colours.
applyTheme(storedTheme());

mount(App, { target: document.getElementById('app')! });
