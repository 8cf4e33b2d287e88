import Engram
import EngramAgent
import EngramCore
import EngramHTTP
import Foundation

/// The routine tools: list the routines (stored, named plans; `engram skills routine ...`) and
/// run one by name, with the agent's one confirmation for the steps that change something.
extension EngineToolProvider {
  static func routineTools(_ engine: MemoryEngine, _ runner: RoutineRunner) -> [TypedTool] {
    [
      TypedTool(
        "routine_list", title: "List routines",
        description:
          "The user's routines: named lists of requests run as one plan (made in chat with “when I say NAME, "
          + "...” or with `engram skills routine add`), each with its steps and whether it is enabled.",
        input: NoArguments.self,
        output: [
          "type": "object",
          "properties": [
            "routines": [
              "type": "array",
              "items": [
                "type": "object",
                "properties": [
                  "name": ["type": "string"], "enabled": ["type": "boolean"],
                  "steps": [
                    "type": "array",
                    "items": [
                      "type": "object",
                      "properties": ["text": ["type": "string"], "skill": ["type": ["string", "null"]]],
                      "required": ["text"],
                    ],
                  ],
                ],
                "required": ["name", "enabled", "steps"],
              ],
            ]
          ],
          "required": ["routines"],
        ],
        annotations: ToolAnnotations(readOnlyHint: true, openWorldHint: false)
      ) { _ in
        let routines = try await engine.agentRecords.routines()
        let value: JSONValue = [
          "routines": .array(
            routines.map { routine in
              [
                "name": .string(routine.name), "enabled": .bool(routine.enabled),
                "steps": .array(
                  routine.steps.map {
                    ["text": .string($0.text), "skill": $0.skill.map(JSONValue.string) ?? .null]
                  }),
              ]
            })
        ]
        let text =
          routines.isEmpty
          ? "No routines yet."
          : routines.map { routine in
            "\(routine.name)\(routine.enabled ? "" : " (disabled)"): "
              + routine.steps.map(\.text).joined(separator: "; ")
          }.joined(separator: "\n")
        return .structured(value, text: text)
      },
      TypedTool(
        "routine_run", title: "Run a routine",
        description:
          "Run one of the user's routines by name (routine_list lists them). Steps that only look something up "
          + "run at once and their answers come back; when steps would change something (create a reminder, "
          + "remember, cancel), nothing changes yet: the result has status `waiting`, the plan in `plan`, and "
          + "an `execution_id`. Show the plan to the user; only if they agree, call routine_run again with the "
          + "same name and `confirm` set to that id. An id that is no longer the plan waiting is refused.",
        input: RoutineRunArguments.self,
        output: [
          "type": "object",
          "properties": [
            "routine": ["type": "string"], "status": ["type": "string", "enum": ["finished", "waiting"]],
            "execution_id": ["type": "string"], "reply": ["type": "string"], "plan": ["type": "string"],
          ],
          "required": ["routine", "status", "execution_id"],
        ],
        annotations: ToolAnnotations(
          readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true)
      ) { arguments in
        let name = try nonBlank(
          arguments.name, field: "name", pass: "a routine's name (routine_list lists them)")
        let routines = try await engine.agentRecords.routines()
        guard let routine = routines.first(where: { $0.key == Routine.key(name) }) else {
          throw ToolError("no routine is named “\(name)”; routine_list lists them")
        }
        guard routine.enabled else {
          throw ToolError(
            "the routine “\(routine.name)” is disabled; enable it with `engram skills routine enable`")
        }
        let outcome: RoutineRunner.Outcome
        do {
          if let execution = arguments.confirm {
            outcome = try await runner.confirm(routine, execution: execution)
          } else {
            outcome = try await runner.run(routine)
          }
        } catch let error as RoutineRunError {
          throw ToolError(error.description)
        }
        switch outcome {
        case .finished(let text, let execution):
          return .structured(
            [
              "routine": .string(routine.name), "status": "finished",
              "execution_id": .string(execution.uuidString.lowercased()), "reply": .string(text),
            ], text: text)
        case .waiting(let summary, let execution):
          let id = execution.uuidString.lowercased()
          return .structured(
            [
              "routine": .string(routine.name), "status": "waiting", "execution_id": .string(id),
              "plan": .string(summary),
            ],
            text: summary
              + "\nNothing has changed yet. If the user agrees, call routine_run with name “\(routine.name)” "
              + "and confirm \"\(id)\".")
        }
      },
    ]
  }
}
