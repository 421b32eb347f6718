import type { CheckedScope, CheckedStatement } from "@vigil/checker";
import { ruleId, usesEventually } from "@vigil/checker/ir";
import { PatternBinder, type BindingPattern } from "./atoms.js";
import type { MachineState, StateOf } from "./machine-state.js";
import { AbsenceMachine } from "./machines/abs.js";
import { FutureBodyMachine, PastBodyMachine } from "./machines/always.js";
import { LimitMachine } from "./machines/limit.js";
import { PrecedenceMachine } from "./machines/precedence.js";
import { actionsOf } from "./machines/relevant-actions.js";
import { ResolutionMachine } from "./machines/resolution.js";
import { BoundedResponseMachine, ResponseMachine } from "./machines/response.js";
import type { MachineObserver, Observed, StatementMachine } from "./machines/statement-machine.js";
import { UntilMachine } from "./machines/until.js";
import { ScopedMachine } from "./scoped.js";

/**
 * Builds the forward machine of a statement: the machine of its form (one module per form family
 * under `machines/`, their contract in `machines/statement-machine.ts`), under its scope when it
 * has one (`ScopedMachine`), fresh or resumed from a saved state of the same form.
 */

/** A fresh machine for a statement, or one resumed from a snapshot of a machine of the same statement. */
export function createMachine(statement: CheckedStatement, state?: MachineState, observer?: MachineObserver): StatementMachine {
  if (statement.scope !== undefined) return scopedMachine(statement, statement.scope, state, observer);
  const machine = newMachine(statement, state);
  if (observer !== undefined && "attach" in machine) (machine as StatementMachine & Observed).attach(observer);
  return machine;
}

/** A statement under a scope: a machine of the statement alone over each stretch (see `ScopedMachine`). */
function scopedMachine(statement: CheckedStatement, scope: CheckedScope, state: MachineState | undefined, observer: MachineObserver | undefined): StatementMachine {
  const form = `scoped-${scope.kind}`;
  if (state !== undefined && state.form !== form) {
    throw new Error(`the saved state is of a \`${state.form}\` statement, not of \`${ruleId(statement)}\` (${form})`);
  }
  const { scope: _scope, ...unscoped } = statement;
  // The stretch's machine numbers its events from 1; what it tells the observer is put back in place.
  const fresh = (offset: number, innerState?: MachineState) =>
    createMachine(unscoped as CheckedStatement, innerState, observer === undefined || offset === 0 ? observer : shiftedObserver(observer, offset));
  const inner = fresh(0).relevantActions;
  const scopeActions = [scope.open, ...(scope.close !== undefined ? [scope.close] : [])].map(actionsOf);
  const relevant = inner === undefined || scopeActions.some((actions) => actions === undefined) ? undefined : new Set([...inner, ...scopeActions.flatMap((actions) => [...actions!])]);
  return new ScopedMachine(scope, fresh, relevant, state, observer);
}

function shiftedObserver(observer: MachineObserver, offset: number): MachineObserver {
  return {
    trigger: (position) => observer.trigger(position + offset),
    answered: (trigger, by) => observer.answered(trigger + offset, by + offset),
  };
}

function newMachine(statement: CheckedStatement, state?: MachineState): StatementMachine {
  if (state !== undefined && state.form !== machineForm(statement)) {
    throw new Error(`the saved state is of a \`${state.form}\` statement, not of \`${ruleId(statement)}\` (${statement.form})`);
  }
  const bind = (pattern: BindingPattern) => new PatternBinder(pattern, statement.variables);
  // The form was checked above: the state is of this machine's form.
  const saved = <F extends MachineState["form"]>() => state as StateOf<F> | undefined;
  switch (statement.form) {
    case "abs":
      return new AbsenceMachine(statement.pattern.formula);
    case "prec":
      return new PrecedenceMachine(bind(statement.first), bind(statement.second), saved<"prec">());
    case "resp":
      return new ResponseMachine(bind(statement.first), bind(statement.second), saved<"resp">());
    case "bresp":
      return new BoundedResponseMachine(bind(statement.first), bind(statement.second), statement.window, saved<"bresp">());
    case "limit":
      return new LimitMachine(bind(statement.pattern), statement.measure, statement.per, saved<"limit">());
    case "rslv":
      return new ResolutionMachine(bind(statement.first), bind(statement.second), saved<"rslv">());
    case "until":
      return new UntilMachine(bind(statement.trigger), bind(statement.resolve), bind(statement.bad), saved<"until">());
    case "always":
      return usesEventually(statement.body) ? new FutureBodyMachine(statement.body, saved<"always-future">()) : new PastBodyMachine(statement.body, saved<"always">());
  }
}

function machineForm(statement: CheckedStatement): MachineState["form"] {
  return statement.form === "always" && usesEventually(statement.body) ? "always-future" : statement.form;
}
