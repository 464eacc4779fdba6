// A Svelte 5 binding of @tanstack/virtual-core for lists of rows of varying height (runs list,
// timeline): only the rows on screen exist in the page.
import { Virtualizer, elementScroll, observeElementOffset, observeElementRect, type VirtualItem, type VirtualizerOptions } from '@tanstack/virtual-core';

export function createVirtual(estimate: (index: number) => number, overscan = 6) {
  let items = $state.raw<VirtualItem[]>([]);
  let total = $state(0);
  let scrollEl: HTMLElement | null = null;
  const options: VirtualizerOptions<HTMLElement, HTMLElement> = {
    count: 0,
    getScrollElement: () => scrollEl,
    estimateSize: estimate,
    overscan,
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    onChange: (v) => {
      items = v.getVirtualItems();
      total = v.getTotalSize();
    },
  };
  const v = new Virtualizer(options);
  const refresh = () => {
    v._willUpdate();
    items = v.getVirtualItems();
    total = v.getTotalSize();
  };
  return {
    get items() {
      return items;
    },
    get total() {
      return total;
    },
    setCount(count: number) {
      v.setOptions({ ...options, count });
      refresh();
    },
    /** `use:list.attach` on the scrolling element. */
    attach: (node: HTMLElement) => {
      scrollEl = node;
      const cleanup = v._didMount();
      refresh();
      return { destroy: cleanup };
    },
    /** `use:list.measure` on each row (with `data-index`), for rows of varying height. */
    measure: (node: HTMLElement) => {
      v.measureElement(node);
    },
    scrollToIndex(index: number, align: 'start' | 'center' | 'end' | 'auto' = 'auto') {
      v.scrollToIndex(index, { align });
    },
  };
}
