/**
 * A stack kept in blocks of a fixed size, so no push copies it whole. A plain array grows by
 * copying itself into one half again as large: at 2.9 million entries (16 MiB of unclosed
 * `<div>`) that one push took 111-118 ms on a 2-core VM, the copy and the fresh pages together,
 * however finely the work around it was sliced. Here a push costs at most one new block.
 */
export class ChunkedStack<T> {
  private static readonly BLOCK = 16_384;
  private readonly blocks: T[][] = [[]];
  /** The block pushed to last; blocks before it are full. */
  private top: T[] = this.blocks[0]!;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(value: T): void {
    if (this.top.length === ChunkedStack.BLOCK) {
      this.top = [];
      this.blocks.push(this.top);
    }
    this.top.push(value);
    this.size += 1;
  }

  /** The last value pushed, or undefined when empty. */
  peek(): T | undefined {
    return this.top[this.top.length - 1];
  }

  pop(): T | undefined {
    if (this.size === 0) return undefined;
    const value = this.top.pop();
    this.size -= 1;
    if (this.top.length === 0 && this.blocks.length > 1) {
      this.blocks.pop();
      this.top = this.blocks[this.blocks.length - 1]!;
    }
    return value;
  }
}
