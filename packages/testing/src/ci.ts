// Whether the tests run under CI, where a suite that cannot run must fail rather than be skipped.

/** True when `CI` is set to anything but "" or "false". */
export function isCi(): boolean {
  const value = process.env.CI;
  return value !== undefined && value !== "" && value !== "false";
}
