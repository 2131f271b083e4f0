/**
 * A license source for tests: the test sets its status (and the reason given for it); gated
 * calls run as with a real license (`active` or `grace_period`). It manages nothing: activate,
 * sync and deactivate reject.
 */
import type { LicenseSource } from "../../src/license/manager.ts";
import { permitsGatedCalls } from "../../src/license/status.ts";

export class FakeLicense implements LicenseSource {
  constructor(public current: string = "no_license", public why: string = "") {}

  status(): string {
    return this.current;
  }

  isActive(): boolean {
    return permitsGatedCalls(this.current);
  }

  reason(): string {
    return this.why;
  }

  describe(): Record<string, string> {
    return { status: this.current };
  }

  activate(): Promise<Record<string, string>> {
    return Promise.reject(new Error("a FakeLicense cannot be activated"));
  }

  sync(): Promise<Record<string, string>> {
    return Promise.reject(new Error("a FakeLicense cannot be synced"));
  }

  deactivate(): Promise<void> {
    return Promise.reject(new Error("a FakeLicense cannot be deactivated"));
  }
}
