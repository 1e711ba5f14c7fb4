/**
 * `source` in pages of `size` items, read up to `ahead` pages ahead of the consumer: the
 * source's waits (a directory's next entries and their lstats, a bucket's next page) overlap
 * the consumer's work instead of stalling it. One promise per page, none per item (a stream's
 * read-ahead cost ~5 µs an entry, as much as it saved). An error of the source reaches the
 * consumer after the pages read before it; a consumer that stops early ends the source.
 */
export async function* pagesAhead<T>(source: AsyncIterable<T>, size: number, ahead: number): AsyncGenerator<T[]> {
  const pages: T[][] = [];
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;
  let wakeConsumer: (() => void) | undefined;
  let wakeProducer: (() => void) | undefined;
  const wake = (which: 'consumer' | 'producer'): void => {
    const resume = which === 'consumer' ? wakeConsumer : wakeProducer;
    if (which === 'consumer') wakeConsumer = undefined;
    else wakeProducer = undefined;
    resume?.();
  };
  const producer = (async () => {
    let page: T[] = [];
    try {
      for await (const item of source) {
        if (stopped) return;
        page.push(item);
        if (page.length < size) continue;
        pages.push(page);
        page = [];
        wake('consumer');
        while (pages.length >= ahead && !stopped) await new Promise<void>((resolve) => (wakeProducer = resolve));
      }
      if (page.length > 0) pages.push(page);
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      wake('consumer');
    }
  })();
  try {
    for (;;) {
      const page = pages.shift();
      if (page !== undefined) {
        wake('producer');
        yield page;
      } else if (failure) throw failure.error;
      else if (finished) return;
      else await new Promise<void>((resolve) => (wakeConsumer = resolve));
    }
  } finally {
    stopped = true;
    wake('producer');
    await producer;
  }
}
