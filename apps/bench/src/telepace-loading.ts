// How this process loads telepace, and how its child processes should: from dist, as users run
// it, unless the bench itself runs from source (under its tests, through tsx).

/** Where this process loads telepace from. */
export function telepaceLoadedFrom(): "dist" | "source" {
  return import.meta.resolve("@telepace/update-dispatch").includes("/dist/") ? "dist" : "source";
}

/** Node flags for a child that loads telepace as this process does: tsx, and the source condition. */
export function childExecArgv(): string[] {
  return [
    "--import",
    "tsx",
    ...(telepaceLoadedFrom() === "dist" ? [] : ["--conditions=@telepace/source"]),
  ];
}
