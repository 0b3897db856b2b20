import type { AccountRepository } from "../../accounts/account-repository.js";
import type { AuditLog } from "../../accounts/audit-log.js";
import type { Credentials } from "./credentials.js";
import type { PasswordHasher } from "../../accounts/passwords.js";
import type { SignInThrottle } from "../../accounts/sign-in-throttle.js";

/** The accounts room as routes see it (`Services.accounts`). */
export interface AccountServices {
  repository: AccountRepository;
  audit: AuditLog;
  credentials: Credentials;
  passwords: PasswordHasher;
  throttle: SignInThrottle;
  /** Keeps the data dir's `admin-token` file (when there is one) in step with a rotation or a turn-off. */
  rewriteAdminTokenFile(token: string | null): void;
}
