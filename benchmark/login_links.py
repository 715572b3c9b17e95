"""One-use login links for demo accounts and recruited annotators.

A link carries the user's id and a token built like Django's password-reset token (with its own
salt): it depends on the user's password hash and last login, so it stops working once it has
been used (logging in moves ``last_login``) or the password changes, and it expires after
``PASSWORD_RESET_TIMEOUT`` seconds (three days unless set).
"""

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode


class LoginLinkTokenGenerator(PasswordResetTokenGenerator):
    key_salt = "parley.login_links.LoginLinkTokenGenerator"


login_link_tokens = LoginLinkTokenGenerator()


def login_link_path(user: AbstractBaseUser) -> str:
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("login-link", args=[uidb64, login_link_tokens.make_token(user)])
