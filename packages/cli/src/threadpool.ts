// Imported first by bin.ts. Every file operation (open, read, fsync, rename) runs on libuv's
// thread pool, 4 threads by default: 16 concurrent uploads each waiting on an fsync would
// leave none for reads. libuv sizes the pool on first use, so this must run before any
// asynchronous file access; an explicit UV_THREADPOOL_SIZE in the environment wins.
process.env.UV_THREADPOOL_SIZE ??= '16';
export {};
