/** What a file's bytes say about its format. */
export interface ContentMatch {
  /** The format the content names (possibly outside the federation's list). */
  formatId: string;
  /**
   * True when the content names this format for certain (a standard's root and namespace, a
   * signature); false for a generic reading (XML, JSON, text) that a file extension may refine.
   */
  exact: boolean;
  /** The media type of the content (for a formatId outside the list). */
  mediaType: string;
  /** Why, for logs and `memberkit scan`. */
  reason: string;
}
