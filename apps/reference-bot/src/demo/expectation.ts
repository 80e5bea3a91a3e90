// What the demo checks: each simulated user's expected reply, met or not, and why.

/** What a simulated user did and expects a reply to. */
export type ExpectationKind =
  | "help"
  | "echo"
  | "work"
  | "cancel"
  | "document"
  | "file"
  | "group-echo"
  | "group-work"
  | "migration"
  | "blocked"
  | "ask"
  | "ask-stop"
  | "restart"
  | "broadcast";

/** One expected reply and whether it came. */
export interface Expectation {
  readonly kind: ExpectationKind;
  readonly user: string;
  met: boolean;
  /** Why it was not met (empty when met). */
  problem: string;
  /** From the user's action to the reply that satisfied it, in ms. */
  latencyMs: number | undefined;
}
