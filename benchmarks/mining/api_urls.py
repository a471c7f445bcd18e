app_name = "mining_api"
urlpatterns: list = []
