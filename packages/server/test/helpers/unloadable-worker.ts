/**
 * A worker module that fails while loading, as a worker whose file or dependency is missing
 * does: the thread dies before it takes a task.
 */
throw new Error('this worker module does not load (test)');
