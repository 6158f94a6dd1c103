"""People and groups in the theme's forms: Django's own admins, re-registered on unfold's
ModelAdmin (its widgets style the inputs; the stock ones would come out unstyled)."""

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin as StockGroupAdmin
from django.contrib.auth.admin import UserAdmin as StockUserAdmin
from django.contrib.auth.models import Group, User
from unfold.admin import ModelAdmin
from unfold.forms import AdminPasswordChangeForm, UserChangeForm, UserCreationForm

admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class UserAdmin(StockUserAdmin, ModelAdmin):
    form = UserChangeForm
    add_form = UserCreationForm
    change_password_form = AdminPasswordChangeForm


@admin.register(Group)
class GroupAdmin(StockGroupAdmin, ModelAdmin):
    pass
